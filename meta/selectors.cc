#include "meta/selectors.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "meta/validation.h"

namespace shepherd::meta {

namespace {

struct Lexer {
  std::string_view s;
  size_t i = 0;
  void ws() {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  }
  bool done() {
    ws();
    return i >= s.size();
  }
  bool isIdentChar(char c) {
    return !std::isspace(static_cast<unsigned char>(c)) && c != ',' && c != '=' && c != '!' && c != '(' &&
           c != ')' && c != '<' && c != '>';
  }
  std::string ident() {
    ws();
    size_t start = i;
    while (i < s.size() && isIdentChar(s[i])) ++i;
    return std::string(s.substr(start, i - start));
  }
  bool eat(std::string_view t) {
    ws();
    if (s.substr(i, t.size()) == t) {
      i += t.size();
      return true;
    }
    return false;
  }
};

ApiError selectorError(std::string_view text, const std::string& why) {
  return ApiError::badRequest("unable to parse requirement: " + why + " (in label selector \"" +
                              std::string(text) + "\")");
}

std::string_view lookupLabel(const StringPairs& labels, const std::string& key, bool& found) {
  for (const auto& [k, v] : labels)
    if (k == key) {
      found = true;
      return v;
    }
  found = false;
  return {};
}

}  // namespace

const std::string* lookup(const StringPairs& pairs, std::string_view key) {
  for (const auto& [k, v] : pairs)
    if (k == key) return &v;
  return nullptr;
}

Result<LabelSelector> LabelSelector::parse(std::string_view text) {
  LabelSelector sel;
  Lexer lx{text};
  if (lx.done()) return sel;
  while (true) {
    LabelRequirement r;
    bool negated = lx.eat("!");
    r.key = lx.ident();
    if (r.key.empty())
      return selectorError(text, "found '" + std::string(text.substr(lx.i, 1)) + "', expected: identifier");
    auto keyErrs = validation::qualifiedName(r.key);
    if (!keyErrs.empty()) return selectorError(text, "invalid label key \"" + r.key + "\": " + keyErrs[0]);
    if (negated) {
      r.op = LabelRequirement::Op::DoesNotExist;
    } else if (lx.eat("==") || lx.eat("=")) {
      r.op = LabelRequirement::Op::Equals;
    } else if (lx.eat("!=")) {
      r.op = LabelRequirement::Op::NotEquals;
    } else if (lx.eat(">")) {
      r.op = LabelRequirement::Op::GreaterThan;
    } else if (lx.eat("<")) {
      r.op = LabelRequirement::Op::LessThan;
    } else {
      lx.ws();
      size_t save = lx.i;
      std::string word = lx.ident();
      if (word == "in" || word == "notin") {
        r.op = word == "in" ? LabelRequirement::Op::In : LabelRequirement::Op::NotIn;
        if (!lx.eat("("))
          return selectorError(text, "found '" + std::string(text.substr(lx.i, 1)) + "', expected: '('");
        while (true) {
          lx.ws();
          if (lx.eat(")")) break;
          std::string v = lx.ident();
          r.values.push_back(v);
          if (lx.eat(",")) continue;
          if (lx.eat(")")) break;
          return selectorError(
              text, "found '" + std::string(text.substr(lx.i, 1)) + "', expected: ',', ')' or identifier");
        }
        if (r.values.empty() || (r.values.size() == 1 && r.values[0].empty() && false))
          return selectorError(text, "for 'in', 'notin' operators, values set can't be empty");
      } else {
        lx.i = save;
        r.op = LabelRequirement::Op::Exists;
      }
    }
    if (r.op == LabelRequirement::Op::Equals || r.op == LabelRequirement::Op::NotEquals ||
        r.op == LabelRequirement::Op::GreaterThan || r.op == LabelRequirement::Op::LessThan) {
      r.values.push_back(lx.ident());
      if (r.op == LabelRequirement::Op::GreaterThan || r.op == LabelRequirement::Op::LessThan) {
        char* end = nullptr;
        std::strtoll(r.values[0].c_str(), &end, 10);
        if (r.values[0].empty() || *end != '\0')
          return selectorError(text, "for 'Gt', 'Lt' operators, the value must be an integer");
      }
    }
    for (auto& v : r.values) {
      auto errs = validation::labelValue(v);
      if (!errs.empty()) return selectorError(text, "invalid label value: \"" + v + "\": " + errs[0]);
    }
    sel.reqs_.push_back(std::move(r));
    if (lx.done()) break;
    if (!lx.eat(","))
      return selectorError(
          text, "found '" + std::string(text.substr(lx.i, 1)) + "', expected: ',' or 'end of string'");
  }
  return sel;
}

Result<LabelSelector> LabelSelector::fromJson(const json::Value& selector) {
  LabelSelector sel;
  if (!selector.IsObject()) return ApiError::badRequest("a label selector must be an object");
  if (const json::Value* ml = json::find(selector, "matchLabels"); ml && ml->IsObject())
    for (auto& kv : ml->GetObject())
      sel.reqs_.push_back({std::string(json::view(kv.name)),
                           LabelRequirement::Op::Equals,
                           {std::string(json::view(kv.value))}});
  if (const json::Value* me = json::find(selector, "matchExpressions"); me && me->IsArray())
    for (auto& e : me->GetArray()) {
      LabelRequirement r;
      r.key = json::getString(e, "key");
      std::string_view op = json::getString(e, "operator");
      if (op == "In")
        r.op = LabelRequirement::Op::In;
      else if (op == "NotIn")
        r.op = LabelRequirement::Op::NotIn;
      else if (op == "Exists")
        r.op = LabelRequirement::Op::Exists;
      else if (op == "DoesNotExist")
        r.op = LabelRequirement::Op::DoesNotExist;
      else
        return ApiError::badRequest("\"" + std::string(op) + "\" is not a valid label selector operator");
      if (const json::Value* vs = json::find(e, "values"); vs && vs->IsArray())
        for (auto& v : vs->GetArray()) r.values.emplace_back(json::view(v));
      bool needsValues = r.op == LabelRequirement::Op::In || r.op == LabelRequirement::Op::NotIn;
      if (needsValues == r.values.empty())
        return ApiError::badRequest("label selector operator " + std::string(op) +
                                    (needsValues ? " needs values" : " takes no values"));
      sel.reqs_.push_back(std::move(r));
    }
  return sel;
}

bool LabelSelector::matchesLabels(const json::Value* labels) const {
  StringPairs pairs;
  if (labels && labels->IsObject())
    for (auto& kv : labels->GetObject())
      if (kv.value.IsString())
        pairs.emplace_back(std::string(json::view(kv.name)), std::string(json::view(kv.value)));
  std::sort(pairs.begin(), pairs.end());
  return matches(pairs);
}

bool LabelSelector::matches(const StringPairs& labels) const {
  for (const auto& r : reqs_) {
    bool found = false;
    std::string_view v = lookupLabel(labels, r.key, found);
    switch (r.op) {
      case LabelRequirement::Op::Equals:
        if (!found || v != r.values[0]) return false;
        break;
      case LabelRequirement::Op::NotEquals:
        if (found && v == r.values[0]) return false;
        break;
      case LabelRequirement::Op::In:
        if (!found || std::find(r.values.begin(), r.values.end(), v) == r.values.end()) return false;
        break;
      case LabelRequirement::Op::NotIn:
        if (found && std::find(r.values.begin(), r.values.end(), v) != r.values.end()) return false;
        break;
      case LabelRequirement::Op::Exists:
        if (!found) return false;
        break;
      case LabelRequirement::Op::DoesNotExist:
        if (found) return false;
        break;
      case LabelRequirement::Op::GreaterThan:
      case LabelRequirement::Op::LessThan: {
        if (!found) return false;
        char* end = nullptr;
        std::string sv(v);
        long long have = std::strtoll(sv.c_str(), &end, 10);
        if (sv.empty() || *end != '\0') return false;
        long long want = std::strtoll(r.values[0].c_str(), nullptr, 10);
        if (r.op == LabelRequirement::Op::GreaterThan ? !(have > want) : !(have < want)) return false;
        break;
      }
    }
  }
  return true;
}

Result<FieldSelector> FieldSelector::parse(std::string_view text, const std::vector<std::string>& allowed,
                                           bool namespaced) {
  FieldSelector sel;
  if (text.find_first_not_of(" \t") == std::string_view::npos) return sel;
  // Split on unescaped commas.
  std::vector<std::string> terms;
  std::string cur;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      cur += c;
      cur += text[++i];
    } else if (c == ',') {
      terms.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  terms.push_back(cur);
  auto unescape = [](std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '\\' && i + 1 < s.size()) ++i;
      out += s[i];
    }
    return out;
  };
  for (auto& t : terms) {
    FieldRequirement r;
    size_t pos = std::string::npos;
    size_t oplen = 0;
    for (size_t i = 0; i < t.size(); ++i) {
      if (t[i] == '\\') {
        ++i;
        continue;
      }
      if (t.compare(i, 2, "!=") == 0) {
        pos = i, oplen = 2, r.equals = false;
        break;
      }
      if (t.compare(i, 2, "==") == 0) {
        pos = i, oplen = 2;
        break;
      }
      if (t[i] == '=') {
        pos = i, oplen = 1;
        break;
      }
    }
    if (pos == std::string::npos)
      return ApiError::badRequest("invalid selector: '" + std::string(text) + "'; can't understand '" + t +
                                  "'");
    r.field = unescape(std::string_view(t).substr(0, pos));
    while (!r.field.empty() && r.field.back() == ' ') r.field.pop_back();
    while (!r.field.empty() && r.field.front() == ' ') r.field.erase(0, 1);
    r.value = unescape(std::string_view(t).substr(pos + oplen));
    bool ok = r.field == "metadata.name" || (r.field == "metadata.namespace" && namespaced) ||
              std::find(allowed.begin(), allowed.end(), r.field) != allowed.end();
    if (r.field == "metadata.namespace" && !namespaced) ok = true;
    if (!ok) return ApiError::badRequest("field label not supported: " + r.field);
    sel.reqs_.push_back(std::move(r));
  }
  return sel;
}

bool FieldSelector::matches(const std::string& name, const std::string& ns, const StringPairs& fields) const {
  for (const auto& r : reqs_) {
    const std::string* have = nullptr;
    if (r.field == "metadata.name")
      have = &name;
    else if (r.field == "metadata.namespace")
      have = &ns;
    else
      have = lookup(fields, r.field);
    std::string_view v = have ? std::string_view(*have) : std::string_view();
    if (r.equals ? v != r.value : v == r.value) return false;
  }
  return true;
}

const std::string* FieldSelector::exactValue(std::string_view field) const {
  for (const auto& r : reqs_)
    if (r.equals && r.field == field) return &r.value;
  return nullptr;
}

}  // namespace shepherd::meta
