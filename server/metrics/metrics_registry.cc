#include "server/metrics/metrics_registry.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "server/metrics/prometheus_text.h"

namespace inspector::metrics {
namespace {

[[noreturn]] void Misuse(std::string_view what) {
  std::fprintf(stderr, "metrics registry: %.*s\n",
               static_cast<int>(what.size()), what.data());
  std::abort();
}

bool NameChar(char c, bool first, bool colon) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
    return true;
  }
  if (colon && c == ':') return true;
  return !first && c >= '0' && c <= '9';
}

bool ValidName(std::string_view name, bool colon) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    if (!NameChar(name[i], i == 0, colon)) return false;
  }
  return true;
}

void AddDouble(std::atomic<double>& target, double delta) {
  double old = target.load(std::memory_order_relaxed);
  while (!target.compare_exchange_weak(old, old + delta,
                                       std::memory_order_relaxed)) {
  }
}

// The callback family: series come from `collect` at each render.
class CallbackFamily : public MetricsRegistry::FamilyBase {
 public:
  CallbackFamily(std::string name, std::string help,
                 MetricsRegistry::Type type,
                 std::vector<std::string> label_names,
                 MetricsRegistry::Collect collect)
      : FamilyBase(std::move(name), std::move(help), type,
                   std::move(label_names)),
        collect_(std::move(collect)) {}

  void CollectSeries(MetricsRegistry::FamilySnapshot* out) const override {
    std::vector<MetricsRegistry::Sample> samples = collect_();
    std::sort(samples.begin(), samples.end(),
              [](const auto& a, const auto& b) {
                return a.label_values < b.label_values;
              });
    for (MetricsRegistry::Sample& sample : samples) {
      if (sample.label_values.size() != label_names().size()) continue;
      MetricsRegistry::SeriesSnapshot& series = out->series.emplace_back();
      series.label_values = std::move(sample.label_values);
      series.value = sample.value;
    }
  }

 private:
  const MetricsRegistry::Collect collect_;
};

}  // namespace

void MetricsRegistry::Gauge::Add(double delta) { AddDouble(value_, delta); }

MetricsRegistry::Histogram::Histogram(const std::vector<double>* bounds)
    : bounds_(bounds),
      buckets_(new std::atomic<uint64_t>[bounds->size() + 1]) {
  for (size_t i = 0; i <= bounds_->size(); ++i) buckets_[i].store(0);
}

void MetricsRegistry::Histogram::Observe(double value) {
  const size_t bucket =
      std::lower_bound(bounds_->begin(), bounds_->end(), value) -
      bounds_->begin();
  buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
  AddDouble(sum_, value);
}

std::vector<uint64_t> MetricsRegistry::Histogram::CumulativeCounts() const {
  std::vector<uint64_t> counts(bounds_->size() + 1);
  uint64_t total = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    total += buckets_[i].load(std::memory_order_relaxed);
    counts[i] = total;
  }
  return counts;
}

MetricsRegistry::FamilyBase::FamilyBase(std::string name, std::string help,
                                        Type type,
                                        std::vector<std::string> label_names)
    : name_(std::move(name)),
      help_(std::move(help)),
      type_(type),
      label_names_(std::move(label_names)) {
  if (!ValidMetricName(name_)) Misuse(absl::StrCat("bad metric name ", name_));
  for (const std::string& label : label_names_) {
    if (!ValidLabelName(label) ||
        (type_ == Type::kHistogram && label == "le")) {
      Misuse(absl::StrCat("bad label name ", label, " in ", name_));
    }
  }
}

const std::string& MetricsRegistry::FamilyBase::Key(
    absl::Span<const std::string_view> values) {
  // Each value after its length, as raw bytes: no two lists of values
  // share a key, and nothing is formatted on a request's path.
  thread_local std::string key;
  key.clear();
  for (std::string_view value : values) {
    const uint32_t size = static_cast<uint32_t>(value.size());
    key.append(reinterpret_cast<const char*>(&size), sizeof(size));
    key.append(value.data(), value.size());
  }
  return key;
}

template <>
std::unique_ptr<MetricsRegistry::Counter>
MetricsRegistry::Family<MetricsRegistry::Counter>::Make() const {
  return std::make_unique<Counter>();
}
template <>
std::unique_ptr<MetricsRegistry::Gauge>
MetricsRegistry::Family<MetricsRegistry::Gauge>::Make() const {
  return std::make_unique<Gauge>();
}
template <>
std::unique_ptr<MetricsRegistry::Histogram>
MetricsRegistry::Family<MetricsRegistry::Histogram>::Make() const {
  return std::make_unique<Histogram>(&bounds_);
}

template <typename T>
T* MetricsRegistry::Family<T>::With(absl::Span<const std::string_view> values) {
  if (values.size() != label_names().size()) {
    Misuse(absl::StrCat(name(), " has ", label_names().size(),
                        " labels, given ", values.size(), " values"));
  }
  const std::string& key = Key(values);
  {
    absl::ReaderMutexLock lock(&mu_);
    auto it = series_.find(key);
    if (it != series_.end()) return it->second.metric.get();
  }
  const std::string owned_key = key;
  absl::MutexLock lock(&mu_);
  if (series_.size() >= kMaxSeries && !series_.contains(owned_key)) {
    // Full: the overflow series (added beyond the limit, once).
    const std::vector<std::string_view> other(values.size(), "_OTHER");
    Series& overflow = series_[Key(other)];
    if (overflow.metric == nullptr) {
      overflow.values.assign(other.begin(), other.end());
      overflow.metric = Make();
    }
    return overflow.metric.get();
  }
  Series& series = series_[owned_key];
  if (series.metric == nullptr) {
    series.values.assign(values.begin(), values.end());
    series.metric = Make();
  }
  return series.metric.get();
}

template <typename T>
void MetricsRegistry::Family<T>::CollectSeries(FamilySnapshot* out) const {
  if constexpr (std::is_same_v<T, Histogram>) out->bounds = bounds_;
  std::vector<const Series*> sorted;
  absl::ReaderMutexLock lock(&mu_);
  sorted.reserve(series_.size());
  for (const auto& [key, series] : series_) sorted.push_back(&series);
  std::sort(sorted.begin(), sorted.end(),
            [](const Series* a, const Series* b) { return a->values < b->values; });
  out->series.reserve(sorted.size());
  for (const Series* series : sorted) {
    SeriesSnapshot& snapshot = out->series.emplace_back();
    snapshot.label_values = series->values;
    if constexpr (std::is_same_v<T, Histogram>) {
      snapshot.buckets = series->metric->CumulativeCounts();
      snapshot.sum = series->metric->sum();
    } else {
      snapshot.value = static_cast<double>(series->metric->value());
    }
  }
}

template class MetricsRegistry::Family<MetricsRegistry::Counter>;
template class MetricsRegistry::Family<MetricsRegistry::Gauge>;
template class MetricsRegistry::Family<MetricsRegistry::Histogram>;

MetricsRegistry::MetricsRegistry() = default;
MetricsRegistry::~MetricsRegistry() = default;

void MetricsRegistry::Register(std::unique_ptr<FamilyBase> family) {
  absl::MutexLock lock(&mu_);
  for (const auto& existing : families_) {
    if (existing->name() == family->name()) {
      Misuse(absl::StrCat(family->name(), " registered twice"));
    }
  }
  families_.push_back(std::move(family));
}

MetricsRegistry::Family<MetricsRegistry::Counter>* MetricsRegistry::AddCounter(
    std::string name, std::string help, std::vector<std::string> label_names) {
  auto family = std::make_unique<Family<Counter>>(
      std::move(name), std::move(help), Type::kCounter, std::move(label_names));
  Family<Counter>* raw = family.get();
  Register(std::move(family));
  return raw;
}

MetricsRegistry::Family<MetricsRegistry::Gauge>* MetricsRegistry::AddGauge(
    std::string name, std::string help, std::vector<std::string> label_names) {
  auto family = std::make_unique<Family<Gauge>>(
      std::move(name), std::move(help), Type::kGauge, std::move(label_names));
  Family<Gauge>* raw = family.get();
  Register(std::move(family));
  return raw;
}

MetricsRegistry::Family<MetricsRegistry::Histogram>*
MetricsRegistry::AddHistogram(std::string name, std::string help,
                              std::vector<std::string> label_names,
                              std::vector<double> bounds) {
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i]) || (i > 0 && bounds[i] <= bounds[i - 1])) {
      Misuse(absl::StrCat(name, ": bucket bounds must be finite and rise"));
    }
  }
  auto family = std::make_unique<Family<Histogram>>(
      std::move(name), std::move(help), Type::kHistogram,
      std::move(label_names), std::move(bounds));
  Family<Histogram>* raw = family.get();
  Register(std::move(family));
  return raw;
}

void MetricsRegistry::AddCallback(std::string name, std::string help,
                                  Type type,
                                  std::vector<std::string> label_names,
                                  Collect collect) {
  if (type == Type::kHistogram) Misuse("a callback family is not a histogram");
  Register(std::make_unique<CallbackFamily>(std::move(name), std::move(help),
                                            type, std::move(label_names),
                                            std::move(collect)));
}

std::vector<MetricsRegistry::FamilySnapshot> MetricsRegistry::Snapshot()
    const {
  std::vector<const FamilyBase*> families;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& family : families_) families.push_back(family.get());
  }
  std::vector<FamilySnapshot> out(families.size());
  for (size_t i = 0; i < families.size(); ++i) {
    out[i].name = families[i]->name();
    out[i].help = families[i]->help();
    out[i].type = families[i]->type();
    out[i].label_names = families[i]->label_names();
    families[i]->CollectSeries(&out[i]);
  }
  return out;
}

std::string MetricsRegistry::Render() const {
  return RenderPrometheusText(Snapshot());
}

bool MetricsRegistry::ValidMetricName(std::string_view name) {
  return ValidName(name, /*colon=*/true);
}

bool MetricsRegistry::ValidLabelName(std::string_view name) {
  return ValidName(name, /*colon=*/false) && name.substr(0, 2) != "__";
}

}  // namespace inspector::metrics
