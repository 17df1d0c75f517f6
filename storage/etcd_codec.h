// EtcdStorage's codec: the JSON bodies of etcd's gateway calls (bytes fields in standard
// base64, int64 fields as strings) and the decoding of its answers into Storage types,
// keys mapped between the caller's key space and the wire. Pure functions. Internal to
// storage/etcd_*.cc.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/json.h"
#include "storage/storage.h"

namespace shepherd::storage::etcd_internal {

// int64 fields arrive as JSON strings ("42") and are left out when zero.
int64_t int64Field(const json::Value& obj, std::string_view name);
int64_t headerRevision(const json::Value& obj);
// The first element of obj[list], or nullptr (absent lists are how the gateway says "empty").
const json::Value* firstOf(const json::Value* obj, std::string_view list);
// responses[0].<kind> of a txn answer.
const json::Value* firstResponse(const json::Value& txn, std::string_view kind);

struct RangeArgs {
  std::string key;
  std::string range_end;  // empty: the single key
  int64_t limit = 0;
  int64_t revision = 0;  // 0: the current one
  bool keys_only = false;
};

std::string rangeBody(const RangeArgs& a);

enum class Then { Put, Delete };

// A txn on one key: if <field>(key) <result> revision, put or delete (returning the deleted
// value); otherwise read the key, so a failed compare tells the key's current state (the
// failure branch kube-apiserver uses).
std::string txnBody(const std::string& key, const char* target, const char* field, const char* result,
                    int64_t revision, Then then, std::string_view value);
std::string compactionBody(int64_t revision);
std::string watchBody(const std::string& key, const std::string& range_end, int64_t start_revision);

// How keys map between the caller's space and the wire: `root` there is `wire` here.
struct KeySpace {
  std::string_view root;
  std::string_view wire;
  bool local(std::string_view w, std::string& key) const {
    if (w.compare(0, wire.size(), wire) != 0) return false;
    key.assign(root);
    key.append(w.substr(wire.size()));
    return true;
  }
};

enum class Decoded { Ok, Foreign, Malformed };

// An etcd KeyValue in the caller's key space; Foreign for a key outside it.
Decoded decodeKv(const json::Value& o, const KeySpace& ks, KeyValue& kv);
// A watch event. A DELETE's kv has only the key and the deletion's revision; prev_kv (asked
// for with prev_kv) gives the deleted value and the incarnation's create_revision.
Decoded decodeEvent(const json::Value& ev, const KeySpace& ks, Event& e);

}  // namespace shepherd::storage::etcd_internal
