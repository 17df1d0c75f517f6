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
  // A program's command line: prints the error and the flags on a bad flag or a missing
  // `required` one (returns 2), the usage on --help (returns 0), else sets the log level
  // from --v (if defined) and returns -1: go on.
  int parseMain(int argc, char** argv, const std::string& program, const std::string& usage_line,
                const std::vector<std::string>& required = {});
  std::string get(const std::string& name) const;
  int getInt(const std::string& name) const;
  bool getBool(const std::string& name) const;
  // A comma-separated flag's entries, empty ones dropped ("a,,b" -> {"a", "b"}).
  std::vector<std::string> getList(const std::string& name) const;
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
