#include "admission/admission.h"

namespace shepherd::admission {

const char* operationName(Operation op) {
  switch (op) {
    case Operation::Create:
      return "CREATE";
    case Operation::Update:
      return "UPDATE";
    case Operation::Delete:
      return "DELETE";
  }
  return "";
}

Status Plugin::admit(const Attributes&, json::Document&, const json::Value*) const {
  return okStatus();
}
Status Plugin::validate(const Attributes&, const json::Value&, const json::Value*) const {
  return okStatus();
}

Status Chain::admit(const Attributes& a, json::Document& obj, const json::Value* old) const {
  for (const auto& p : plugins_)
    if (auto st = p->admit(a, obj, old); !st) return st;
  return okStatus();
}

Status Chain::validate(const Attributes& a, const json::Value& obj, const json::Value* old) const {
  for (const auto& p : plugins_)
    if (auto st = p->validate(a, obj, old); !st) return st;
  return okStatus();
}

std::vector<std::string> Chain::names() const {
  std::vector<std::string> out;
  for (const auto& p : plugins_) out.push_back(p->name());
  return out;
}

Status Request::admit(Operation op, json::Document& obj, const json::Value* old) const {
  if (!chain) return okStatus();
  Attributes a = attributes;
  a.operation = op;
  return chain->admit(a, obj, old);
}

Status Request::validate(Operation op, const json::Value& obj, const json::Value* old) const {
  if (!chain) return okStatus();
  Attributes a = attributes;
  a.operation = op;
  return chain->validate(a, obj, old);
}

}  // namespace shepherd::admission
