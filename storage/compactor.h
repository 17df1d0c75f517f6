// Compactor: periodic compaction of old revisions, as kube-apiserver does it. Each round
// compacts to the revision seen one round earlier, so history younger than one interval
// stays available to lists and watches. Several API servers on one etcd take turns: a
// round first moves the key `compact_rev_key` with a compare-and-swap on the revision it
// saw there last round; a server that loses the race (another compacted meanwhile) skips
// its round, so the cluster compacts about once per interval, not once per server.
#pragma once

#include <cstdint>
#include <string>

#include "storage/storage.h"

namespace shepherd::storage {

// Thread-safety: round() from one thread at a time.
class Compactor {
 public:
  explicit Compactor(Storage& storage, std::string key = "/registry/compact_rev_key");

  // One round; returns the revision compacted to (0: none this round).
  Outcome<int64_t> round();

 private:
  Storage& storage_;
  std::string key_;
  int64_t seen_mod_ = -1;  // compact_rev_key's mod_revision at the last round (-1: no round yet)
  int64_t pending_ = 0;    // the revision seen at the last round: what the next one compacts to
};

}  // namespace shepherd::storage
