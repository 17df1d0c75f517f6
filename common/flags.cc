#include "common/flags.h"

#include <cstdio>
#include <cstdlib>

#include "common/log.h"

namespace shepherd {

void Flags::define(const std::string& name, const std::string& def, const std::string& help, bool boolean) {
  defs_[name] = Def{def, help, boolean};
}

bool Flags::parse(int argc, char** argv, int start, std::string& error) {
  for (int i = start; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) != 0) {
      positional_.push_back(a);
      continue;
    }
    std::string name = a.substr(2), value;
    bool has_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    auto it = defs_.find(name);
    if (it == defs_.end()) {
      error = "unknown flag --" + name;
      return false;
    }
    if (!has_value) {
      if (it->second.boolean) {
        value = "true";
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        error = "flag --" + name + " needs a value";
        return false;
      }
    }
    it->second.value = value;
  }
  return true;
}

std::string Flags::get(const std::string& name) const {
  auto it = defs_.find(name);
  return it == defs_.end() ? "" : it->second.value;
}

int Flags::getInt(const std::string& name) const {
  return std::atoi(get(name).c_str());
}

bool Flags::getBool(const std::string& name) const {
  std::string v = get(name);
  return v == "true" || v == "1" || v == "yes";
}

std::vector<std::string> Flags::getList(const std::string& name) const {
  std::string v = get(name);
  std::vector<std::string> out;
  size_t start = 0;
  while (start < v.size()) {
    size_t comma = v.find(',', start);
    if (comma == std::string::npos) comma = v.size();
    if (comma > start) out.push_back(v.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

std::string Flags::usage() const {
  std::string out;
  for (const auto& [name, d] : defs_) {
    out += "  --" + name;
    if (!d.boolean) out += "=" + (d.value.empty() ? std::string("''") : d.value);
    out += "\n      " + d.help + "\n";
  }
  return out;
}

int Flags::parseMain(int argc, char** argv, const std::string& program, const std::string& usage_line,
                     const std::vector<std::string>& required) {
  std::string error;
  if (!parse(argc, argv, 1, error)) {
    std::fprintf(stderr, "%s: %s\nflags:\n%s", program.c_str(), error.c_str(), usage().c_str());
    return 2;
  }
  if (defs_.count("help") && getBool("help")) {
    std::printf("usage: %s\n%s", usage_line.c_str(), usage().c_str());
    return 0;
  }
  if (defs_.count("v") && getInt("v") > 0) log::setLevel(log::Level::Debug);
  for (const auto& name : required)
    if (get(name).empty()) {
      std::fprintf(stderr, "%s: --%s is required\n", program.c_str(), name.c_str());
      return 2;
    }
  return -1;
}

}  // namespace shepherd
