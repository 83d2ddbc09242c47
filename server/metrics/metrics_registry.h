// The daemon's Prometheus metrics: counters, gauges and histograms with
// fixed buckets, grouped in families (one name, one HELP, one TYPE) whose
// series are told apart by label values; plus families read at scrape
// time from a callback (gauges of state other components own).
// Snapshot() reads every family at once into plain values (names, label
// sets, values, histogram buckets): what an exporter reads. Render() is
// that snapshot in the text exposition format 0.0.4 for GET /metrics
// (prometheus_text.h); another exporter (OTLP) reads the same snapshot.
//
// Names are Prometheus names as given (callers translate OpenTelemetry
// names: dots to underscores, a unit suffix such as _seconds, _total on
// counters). A label whose value is empty is left out of the series'
// text, as Prometheus treats it as absent. A bad metric or label name, a
// name registered twice or a series asked for with the wrong number of
// label values is a programming error: the process aborts with a message.
//
// Ownership: the registry owns its families and their series; the
// pointers it hands out stay valid for its whole life (series are never
// removed). A family holds at most kMaxSeries series: label values seen
// after that are counted in one series whose every label is "_OTHER", so
// that values a client chooses cannot grow the memory without bound.
// Callbacks are owned by the registry and must not outlive what
// they read.
//
// Threads: every method may be called from any thread. Counting into a
// series is a relaxed atomic operation, with no lock; finding a series by
// its label values takes the family's lock shared (exclusive only the
// first time those values are seen), so a hot path with fixed labels keeps
// the pointer. Callbacks run on the thread that calls Snapshot() or
// Render(), with no lock of the registry held; they must be quick and must
// not call into the registry. A snapshot is consistent per series (a
// histogram's buckets are monotonic and end in its count), not across
// series.
#ifndef INSPECTOR_SERVER_METRICS_METRICS_REGISTRY_H_
#define INSPECTOR_SERVER_METRICS_METRICS_REGISTRY_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"

namespace inspector::metrics {

class MetricsRegistry {
 public:
  enum class Type { kCounter, kGauge, kHistogram };
  static constexpr size_t kMaxSeries = 2000;

  // A monotonically increasing count.
  class Counter {
   public:
    void Add(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
    uint64_t value() const { return value_.load(std::memory_order_relaxed); }

   private:
    std::atomic<uint64_t> value_{0};
  };

  // A value that goes up and down.
  class Gauge {
   public:
    void Set(double value) { value_.store(value, std::memory_order_relaxed); }
    void Add(double delta);
    double value() const { return value_.load(std::memory_order_relaxed); }

   private:
    std::atomic<double> value_{0};
  };

  // Observations counted into fixed buckets (upper bounds, inclusive, as
  // Prometheus' "le"), with their count and sum.
  class Histogram {
   public:
    // `bounds` (sorted, finite) must outlive the histogram.
    explicit Histogram(const std::vector<double>* bounds);
    void Observe(double value);
    // Cumulative counts, one per bound and last the +Inf bucket (the
    // count); a snapshot, monotonic by construction.
    std::vector<uint64_t> CumulativeCounts() const;
    double sum() const { return sum_.load(std::memory_order_relaxed); }
    const std::vector<double>& bounds() const { return *bounds_; }

   private:
    const std::vector<double>* const bounds_;
    // Not cumulative: bucket i counts bounds[i-1] < v <= bounds[i]; the
    // last one counts v > bounds.back().
    std::unique_ptr<std::atomic<uint64_t>[]> buckets_;
    std::atomic<double> sum_{0};
  };

  // One series of a callback family: its label values and value.
  struct Sample {
    std::vector<std::string> label_values;
    double value = 0;
  };
  using Collect = std::function<std::vector<Sample>()>;

  // One series as read by Snapshot(): its label values (one per label
  // name, in order; "" for a label without a value, which the text format
  // leaves out); for counters and gauges its value; for histograms the
  // cumulative bucket counts (one per bound of the family, last the +Inf
  // bucket, equal to the count) and the sum.
  struct SeriesSnapshot {
    std::vector<std::string> label_values;
    double value = 0;
    std::vector<uint64_t> buckets;
    double sum = 0;
    uint64_t count() const { return buckets.empty() ? 0 : buckets.back(); }
  };
  // One family as read by Snapshot(): what it is and its series, sorted by
  // label values. `bounds`: a histogram's bucket upper bounds ("le").
  struct FamilySnapshot {
    std::string name;
    std::string help;
    Type type = Type::kCounter;
    std::vector<std::string> label_names;
    std::vector<double> bounds;
    std::vector<SeriesSnapshot> series;
  };

  // The series of one family, by label values.
  template <typename T>
  class Family;

  MetricsRegistry();
  ~MetricsRegistry();
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  Family<Counter>* AddCounter(std::string name, std::string help,
                              std::vector<std::string> label_names);
  Family<Gauge>* AddGauge(std::string name, std::string help,
                          std::vector<std::string> label_names);
  // `bounds`: the buckets' upper bounds, sorted ascending, finite (the
  // +Inf bucket is implicit).
  Family<Histogram>* AddHistogram(std::string name, std::string help,
                                  std::vector<std::string> label_names,
                                  std::vector<double> bounds);
  // A counter or gauge family (`type`) whose series `collect` returns at
  // each Render(); samples with the wrong number of label values are
  // skipped.
  void AddCallback(std::string name, std::string help, Type type,
                   std::vector<std::string> label_names, Collect collect);

  // Every family, in the order they were added, with its series now (the
  // callbacks are run).
  std::vector<FamilySnapshot> Snapshot() const;
  // Snapshot() in the text exposition format 0.0.4 (prometheus_text.h).
  std::string Render() const;

  // Name rules of the exposition formats, exposed for tests.
  static bool ValidMetricName(std::string_view name);
  static bool ValidLabelName(std::string_view name);

  class FamilyBase;

 private:
  void Register(std::unique_ptr<FamilyBase> family);

  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<FamilyBase>> families_ ABSL_GUARDED_BY(mu_);
};

// What every family has: its name, help, type and label names, and how it
// reads its series.
class MetricsRegistry::FamilyBase {
 public:
  FamilyBase(std::string name, std::string help, Type type,
             std::vector<std::string> label_names);
  virtual ~FamilyBase() = default;
  // Appends the family's series to `out->series`, sorted by label values
  // (and sets `out->bounds` for a histogram).
  virtual void CollectSeries(FamilySnapshot* out) const = 0;

  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  Type type() const { return type_; }
  const std::vector<std::string>& label_names() const { return label_names_; }

 protected:
  // The lookup key of `values` in a reused per-thread buffer.
  static const std::string& Key(absl::Span<const std::string_view> values);

 private:
  const std::string name_;
  const std::string help_;
  const Type type_;
  const std::vector<std::string> label_names_;
};

template <typename T>
class MetricsRegistry::Family : public MetricsRegistry::FamilyBase {
 public:
  using FamilyBase::FamilyBase;
  Family(std::string name, std::string help, Type type,
         std::vector<std::string> label_names, std::vector<double> bounds)
      : FamilyBase(std::move(name), std::move(help), type,
                   std::move(label_names)),
        bounds_(std::move(bounds)) {}

  // The series with `values` (one per label name, in order), created at
  // its first use.
  T* With(absl::Span<const std::string_view> values);
  T* With(std::initializer_list<std::string_view> values) {
    return With(absl::MakeConstSpan(values.begin(), values.size()));
  }

  void CollectSeries(FamilySnapshot* out) const override;

 private:
  struct Series {
    std::vector<std::string> values;
    std::unique_ptr<T> metric;
  };
  std::unique_ptr<T> Make() const;

  const std::vector<double> bounds_;  // histograms only
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Series> series_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inspector::metrics

#endif  // INSPECTOR_SERVER_METRICS_METRICS_REGISTRY_H_
