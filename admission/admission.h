// Admission: the ordered plugins every write passes through after authorization, as
// upstream's admission chain. Each plugin may change the object in the mutating phase
// (before the kind's strategy defaults and validates it) and refuse it in the validating
// phase (the final object, just before it is stored). Deletes pass the validating phase
// with the stored object. Plugins live in plugins/admission; the API server builds the
// chain (--enable-admission-plugins order is fixed, as upstream's recommended order).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "apis/resource.h"
#include "common/api_error.h"
#include "common/json.h"
#include "meta/user_info.h"

namespace shepherd::admission {

enum class Operation { Create, Update, Delete };
const char* operationName(Operation op);  // CREATE, UPDATE, DELETE (as upstream's messages)

// What a plugin knows of the write (upstream's admission.Attributes).
struct Attributes {
  Operation operation = Operation::Create;
  const apis::Resource* resource = nullptr;
  std::string subresource;  // "", "status", "binding", "token", ...
  std::string ns;
  std::string name;  // may be empty on create (generateName)
  meta::UserInfo user;
  bool dry_run = false;
};

class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual const char* name() const = 0;
  // Mutating phase: may change `obj` (`old` is the stored object on update and delete).
  virtual Status admit(const Attributes& a, json::Document& obj, const json::Value* old) const;
  // Validating phase: may only refuse.
  virtual Status validate(const Attributes& a, const json::Value& obj, const json::Value* old) const;
};

// Thread-safety: immutable once built; admit/validate are called concurrently.
class Chain {
 public:
  void add(std::unique_ptr<Plugin> p) { plugins_.push_back(std::move(p)); }
  // Every plugin's mutating phase, in order; the first error wins.
  Status admit(const Attributes& a, json::Document& obj, const json::Value* old) const;
  // Every plugin's validating phase, in order; the first error wins.
  Status validate(const Attributes& a, const json::Value& obj, const json::Value* old) const;
  std::vector<std::string> names() const;

 private:
  std::vector<std::unique_ptr<Plugin>> plugins_;
};

// One write's admission: the chain and what it is told about the write. The store runs
// both phases at their points (registry::WriteOptions, DeleteOptions).
struct Request {
  const Chain* chain = nullptr;
  Attributes attributes;
  Status admit(Operation op, json::Document& obj, const json::Value* old) const;
  Status validate(Operation op, const json::Value& obj, const json::Value* old) const;
};

}  // namespace shepherd::admission
