#include "auth/token_file.h"

#include <fstream>
#include <sstream>

namespace shepherd::auth {

namespace {

// One CSV record (RFC 4180 quoting: "..." with "" for a quote); false if a quote is open.
bool splitCsv(const std::string& line, std::vector<std::string>& out) {
  out.clear();
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  out.push_back(cur);
  return !quoted;
}

}  // namespace

Result<TokenFile> TokenFile::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return ApiError::badRequest("cannot read the token file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str());
}

Result<TokenFile> TokenFile::parse(const std::string& text) {
  TokenFile tf;
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> fields;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (!splitCsv(line, fields))
      return ApiError::badRequest("token file line " + std::to_string(n) + ": unterminated quote");
    if (fields.size() < 3)
      return ApiError::badRequest("token file line " + std::to_string(n) +
                                  ": a line needs at least 3 fields (token,user,uid)");
    if (fields[0].empty())
      return ApiError::badRequest("token file line " + std::to_string(n) + ": empty token");
    meta::UserInfo u;
    u.name = fields[1];
    u.uid = fields[2];
    if (fields.size() > 3 && !fields[3].empty()) {
      std::stringstream groups(fields[3]);
      std::string g;
      while (std::getline(groups, g, ','))
        if (!g.empty()) u.groups.push_back(g);
    }
    tf.users_[fields[0]] = std::move(u);  // a repeated token: the last line wins, as upstream
  }
  return tf;
}

const meta::UserInfo* TokenFile::find(const std::string& token) const {
  auto it = users_.find(token);
  return it == users_.end() ? nullptr : &it->second;
}

}  // namespace shepherd::auth
