#include "storage/compactor.h"

#include "common/log.h"

namespace shepherd::storage {

Compactor::Compactor(Storage& storage, std::string key) : storage_(storage), key_(std::move(key)) {}

Outcome<int64_t> Compactor::round() {
  using Out = Outcome<int64_t>;
  auto cur = storage_.get(key_);
  if (!cur.ok() && cur.code != Code::NotFound) return Out::failure(cur.code, cur.message);
  int64_t mod = cur.ok() ? cur.value.mod_revision : 0;
  int64_t target = pending_;
  Out out;
  if (seen_mod_ < 0 || mod != seen_mod_) {
    // First round, or another server compacted since our last look: wait one interval.
    seen_mod_ = mod;
    pending_ = storage_.currentRevision();
    return out;
  }
  // Our turn, if nobody moves the key first.
  auto moved = mod == 0 ? storage_.create(key_, std::to_string(target))
                        : storage_.update(key_, std::to_string(target), mod);
  if (!moved.ok()) {
    if (moved.code != Code::Exists && moved.code != Code::Conflict)
      return Out::failure(moved.code, moved.message);
    auto now = storage_.get(key_);
    seen_mod_ = now.ok() ? now.value.mod_revision : 0;
    pending_ = storage_.currentRevision();
    return out;
  }
  seen_mod_ = moved.value;
  pending_ = storage_.currentRevision();
  if (target <= 0) return out;
  auto r = storage_.compact(target);
  if (!r.ok())
    return Out::failure(r.code, "compaction to " + std::to_string(target) + " failed: " + r.message);
  out.value = target;
  return out;
}

}  // namespace shepherd::storage
