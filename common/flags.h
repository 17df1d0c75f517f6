// Command-line flags in upstream's style: --name=value or --name value; booleans as
// --name or --name=false. Unknown flags are errors.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace shepherd {

class Flags {
 public:
  // Declares a flag with its default and help text.
  void define(const std::string& name, const std::string& def, const std::string& help, bool boolean = false);
  // Parses argv[start..]; returns false (with `error`) on an unknown or malformed flag.
  bool parse(int argc, char** argv, int start, std::string& error);
  std::string get(const std::string& name) const;
  int getInt(const std::string& name) const;
  bool getBool(const std::string& name) const;
  std::string usage() const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  struct Def {
    std::string value;
    std::string help;
    bool boolean;
  };
  std::map<std::string, Def> defs_;
  std::vector<std::string> positional_;
};

}  // namespace shepherd
