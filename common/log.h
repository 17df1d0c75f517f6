// Minimal leveled logging to stderr; one line per call, safe from any thread.
#pragma once

#include <sstream>
#include <string>

namespace shepherd::log {

enum class Level { Debug = 0, Info = 1, Warn = 2, Error = 3 };
void setLevel(Level l);
bool enabled(Level l);
void write(Level l, const std::string& msg);

}  // namespace shepherd::log

#define SHEPHERD_LOG(level, expr)                                          \
  do {                                                                     \
    if (::shepherd::log::enabled(::shepherd::log::Level::level)) {         \
      std::ostringstream shepherd_log_os_;                                 \
      shepherd_log_os_ << expr;                                            \
      ::shepherd::log::write(::shepherd::log::Level::level, shepherd_log_os_.str()); \
    }                                                                      \
  } while (0)
#define LOG_DEBUG(expr) SHEPHERD_LOG(Debug, expr)
#define LOG_INFO(expr) SHEPHERD_LOG(Info, expr)
#define LOG_WARN(expr) SHEPHERD_LOG(Warn, expr)
#define LOG_ERROR(expr) SHEPHERD_LOG(Error, expr)
