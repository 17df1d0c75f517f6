#include "registry/service_allocator.h"

#include <cstdio>

namespace shepherd::registry {

std::optional<uint32_t> parseIPv4(const std::string& s) {
  unsigned a, b, c, d;
  char extra;
  if (std::sscanf(s.c_str(), "%u.%u.%u.%u%c", &a, &b, &c, &d, &extra) != 4) return std::nullopt;
  if (a > 255 || b > 255 || c > 255 || d > 255) return std::nullopt;
  return (a << 24) | (b << 16) | (c << 8) | d;
}

std::string formatIPv4(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%u.%u.%u.%u", v >> 24, (v >> 16) & 255, (v >> 8) & 255, v & 255);
  return buf;
}

Result<std::unique_ptr<ServiceAllocator>> ServiceAllocator::make(const std::string& cidr,
                                                                 const std::string& node_ports) {
  auto slash = cidr.find('/');
  if (slash == std::string::npos) return ApiError::badRequest("service CIDR must look like 10.96.0.0/12");
  auto ip = parseIPv4(cidr.substr(0, slash));
  int bits = std::atoi(cidr.c_str() + slash + 1);
  if (!ip || bits < 8 || bits > 30) return ApiError::badRequest("invalid service CIDR " + cidr);
  auto a = std::make_unique<ServiceAllocator>();
  a->cidr_text_ = cidr;
  uint32_t mask = bits == 0 ? 0 : ~((1u << (32 - bits)) - 1);
  a->base_ = *ip & mask;
  a->size_ = 1u << (32 - bits);
  a->next_ = 2;  // the first address is left for the kubernetes service
  int lo = 0, hi = 0;
  if (std::sscanf(node_ports.c_str(), "%d-%d", &lo, &hi) != 2 || lo < 1 || hi > 65535 || lo > hi)
    return ApiError::badRequest("invalid node port range " + node_ports);
  a->port_lo_ = lo;
  a->port_hi_ = hi;
  a->next_port_ = lo;
  return a;
}

std::string ServiceAllocator::firstAddress() const {
  return formatIPv4(base_ + 1);
}

bool ServiceAllocator::contains(const std::string& ip) const {
  auto v = parseIPv4(ip);
  return v && *v > base_ && *v < base_ + size_ - 1;
}

Result<std::string> ServiceAllocator::allocateIP(const std::string& requested) {
  MutexLock g(mu_);
  if (!requested.empty()) {
    auto v = parseIPv4(requested);
    if (!v || *v <= base_ || *v >= base_ + size_ - 1) {
      ApiError e = ApiError::invalid("", "Service", "", {});
      e.message = "failed to allocate IP " + requested + ": the provided IP (" + requested +
                  ") is not in the valid range. The range of valid IPs is " + cidr_text_;
      return e;
    }
    uint32_t off = *v - base_;
    if (used_.count(off)) {
      ApiError e = ApiError::invalid("", "Service", "", {});
      e.message = "failed to allocate IP " + requested + ": provided IP is already allocated";
      return e;
    }
    used_.insert(off);
    return requested;
  }
  for (uint32_t n = 0; n < size_ - 2; ++n) {
    uint32_t off = 1 + (next_ - 1 + n) % (size_ - 2);
    if (!used_.count(off)) {
      used_.insert(off);
      next_ = off + 1;
      return formatIPv4(base_ + off);
    }
  }
  return ApiError::internal("range is full: no service IPs left in " + cidr_text_);
}

void ServiceAllocator::releaseIP(const std::string& ip) {
  auto v = parseIPv4(ip);
  if (!v || *v < base_ || *v >= base_ + size_) return;
  MutexLock g(mu_);
  used_.erase(*v - base_);
}

void ServiceAllocator::markIP(const std::string& ip) {
  auto v = parseIPv4(ip);
  if (!v || *v < base_ || *v >= base_ + size_) return;
  MutexLock g(mu_);
  used_.insert(*v - base_);
}

Result<int> ServiceAllocator::allocatePort(int requested) {
  MutexLock g(mu_);
  if (requested) {
    if (requested < port_lo_ || requested > port_hi_) {
      ApiError e = ApiError::invalid("", "Service", "", {});
      e.message = "provided port is not in the valid range. The range of valid ports is " +
                  std::to_string(port_lo_) + "-" + std::to_string(port_hi_);
      return e;
    }
    if (used_ports_.count(requested)) {
      ApiError e = ApiError::invalid("", "Service", "", {});
      e.message = "provided port is already allocated";
      return e;
    }
    used_ports_.insert(requested);
    return requested;
  }
  int span = port_hi_ - port_lo_ + 1;
  for (int n = 0; n < span; ++n) {
    int p = port_lo_ + (next_port_ - port_lo_ + n) % span;
    if (!used_ports_.count(p)) {
      used_ports_.insert(p);
      next_port_ = p + 1;
      return p;
    }
  }
  return ApiError::internal("range is full: no node ports left");
}

void ServiceAllocator::releasePort(int port) {
  MutexLock g(mu_);
  used_ports_.erase(port);
}

void ServiceAllocator::markPort(int port) {
  MutexLock g(mu_);
  used_ports_.insert(port);
}

}  // namespace shepherd::registry
