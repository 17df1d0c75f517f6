// Allocates Service cluster IPs from the service CIDR and node ports from their range.
// The allocated sets are rebuilt from the stored Services at start, so nothing is
// persisted twice; a failed create releases what it took.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "common/api_error.h"

namespace shepherd::registry {

// Thread-safety: all methods are safe from any thread (one internal mutex).
class ServiceAllocator {
 public:
  // cidr like "10.96.0.0/12"; ports like "30000-32767".
  static Result<std::unique_ptr<ServiceAllocator>> make(const std::string& cidr,
                                                        const std::string& node_ports);

  // The first usable address, reserved for the `kubernetes` service.
  std::string firstAddress() const;
  // Allocates `requested` (must be in range and free) or the next free address.
  Result<std::string> allocateIP(const std::string& requested);
  void releaseIP(const std::string& ip);
  // Marks an address as used (rebuilding state from stored Services).
  void markIP(const std::string& ip);
  bool contains(const std::string& ip) const;

  Result<int> allocatePort(int requested);  // 0 = any
  void releasePort(int port);
  void markPort(int port);
  std::string cidr() const { return cidr_text_; }

 private:
  mutable std::mutex mu_;
  std::string cidr_text_;
  uint32_t base_ = 0;   // network address
  uint32_t size_ = 0;   // number of addresses in the CIDR
  uint32_t next_ = 1;   // rotating cursor (offset)
  std::set<uint32_t> used_;
  int port_lo_ = 30000, port_hi_ = 32767, next_port_ = 30000;
  std::set<int> used_ports_;
};

std::optional<uint32_t> parseIPv4(const std::string& s);
std::string formatIPv4(uint32_t v);

}  // namespace shepherd::registry
