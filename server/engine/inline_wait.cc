#include "server/engine/inline_wait.h"

namespace inspector::engine {
namespace {

thread_local bool inline_wait_allowed = false;

}  // namespace

InlineWaitScope::InlineWaitScope() : previous_(inline_wait_allowed) {
  inline_wait_allowed = true;
}

InlineWaitScope::~InlineWaitScope() { inline_wait_allowed = previous_; }

bool TakeInlineWait() {
  const bool allowed = inline_wait_allowed;
  inline_wait_allowed = false;
  return allowed;
}

}  // namespace inspector::engine
