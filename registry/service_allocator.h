// Allocates Service cluster IPs from the service CIDR and node ports from their range.
// The allocated sets are rebuilt from the stored Services at start, so nothing is
// persisted twice; a failed create releases what it took.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "common/api_error.h"
#include "common/mutex.h"

namespace shepherd::registry {

// Thread-safety: all methods are safe from any thread. mu_ guards the allocation state
// (used_, next_, used_ports_, next_port_); the ranges are set by make() and not changed.
class ServiceAllocator {
 public:
  // cidr like "10.96.0.0/12"; ports like "30000-32767".
  // Not analysed: it sets up a new allocator that no other thread can see yet.
  static Result<std::unique_ptr<ServiceAllocator>> make(
      const std::string& cidr, const std::string& node_ports) NO_THREAD_SAFETY_ANALYSIS;

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
  mutable Mutex mu_;
  std::string cidr_text_;
  uint32_t base_ = 0;                  // network address
  uint32_t size_ = 0;                  // number of addresses in the CIDR
  uint32_t next_ GUARDED_BY(mu_) = 1;  // rotating cursor (offset)
  std::set<uint32_t> used_ GUARDED_BY(mu_);
  int port_lo_ = 30000, port_hi_ = 32767;
  int next_port_ GUARDED_BY(mu_) = 30000;
  std::set<int> used_ports_ GUARDED_BY(mu_);
};

std::optional<uint32_t> parseIPv4(const std::string& s);
std::string formatIPv4(uint32_t v);

}  // namespace shepherd::registry
