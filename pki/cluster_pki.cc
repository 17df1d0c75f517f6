#include "pki/cluster_pki.h"

#include <sys/stat.h>

#include "common/base64.h"
#include "pki/certificate_authority.h"
#include "pki/certificates.h"
#include "pki/openssl_util.h"

namespace shepherd::pki {

namespace {

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool isIp(const std::string& s) {
  return s.find_first_not_of("0123456789.:abcdefABCDEF") == std::string::npos &&
         s.find_first_of(".:") != std::string::npos;
}

// DIR/<base>.crt and .key, issued unless both exist.
Result<IssuedCertificate> ensureIssued(const std::string& dir, const std::string& base,
                                       const std::string& ca_pem, const std::string& ca_key_pem,
                                       const CertificateRequest& req) {
  std::string crt = dir + "/" + base + ".crt", key = dir + "/" + base + ".key";
  if (exists(crt) && exists(key)) {
    auto c = readFile(crt);
    if (!c) return c.error();
    auto k = readFile(key);
    if (!k) return k.error();
    return IssuedCertificate{*c, *k};
  }
  auto issued = issueCertificate(ca_pem, ca_key_pem, req);
  if (!issued) return issued.error();
  if (!writeFileAtomically(key, issued->key_pem, 0600) || !writeFileAtomically(crt, issued->cert_pem, 0644))
    return ApiError::internal("pki: cannot write " + crt);
  return issued;
}

}  // namespace

std::string kubeconfigText(const std::string& server_url, const std::string& ca_pem, const std::string& user,
                           const std::string& cert_pem, const std::string& key_pem) {
  return "apiVersion: v1\nkind: Config\nclusters:\n- name: shepherd\n  cluster:\n    server: " + server_url +
         "\n    certificate-authority-data: " + base64Encode(ca_pem) +
         "\ncontexts:\n- name: shepherd\n  context:\n    cluster: shepherd\n    user: " + user +
         "\ncurrent-context: shepherd\nusers:\n- name: " + user +
         "\n  user:\n    client-certificate-data: " + base64Encode(cert_pem) +
         "\n    client-key-data: " + base64Encode(key_pem) + "\n";
}

Result<bool> ensureClusterPki(const ClusterPkiOptions& o) {
  if (::mkdir(o.dir.c_str(), 0700) != 0 && errno != EEXIST)
    return ApiError::internal("pki: cannot create " + o.dir);
  auto ca = ensureCertificateAuthority(o.dir + "/ca.crt", o.dir + "/ca.key", "shepherd-ca");
  if (!ca) return ca.error();
  auto ca_key = readFile(o.dir + "/ca.key");
  if (!ca_key) return ca_key.error();

  CertificateRequest serving;
  serving.common_name = "kube-apiserver";
  serving.server = true;
  serving.dns_names = {"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
                       "kubernetes.default.svc.cluster.local"};
  serving.ip_addresses = {"127.0.0.1", "::1", "10.96.0.1"};
  for (auto& san : o.extra_sans) (isIp(san) ? serving.ip_addresses : serving.dns_names).push_back(san);
  if (auto r = ensureIssued(o.dir, "apiserver", *ca, *ca_key, serving); !r) return r.error();

  CertificateRequest kubelet_client{"kube-apiserver-kubelet-client", {"system:masters"}, {}, {}, false, 365};
  if (auto r = ensureIssued(o.dir, "apiserver-kubelet-client", *ca, *ca_key, kubelet_client); !r)
    return r.error();

  struct Identity {
    std::string base, user;
    std::vector<std::string> groups;
  };
  std::vector<Identity> ids = {{"admin", "kubernetes-admin", {"system:masters"}},
                               {"scheduler", "system:kube-scheduler", {}},
                               {"controller-manager", "system:kube-controller-manager", {}}};
  for (auto& n : o.nodes) ids.push_back({"node-" + n, "system:node:" + n, {"system:nodes"}});
  for (auto& id : ids) {
    CertificateRequest req{id.user, id.groups, {}, {}, false, 365};
    auto issued = ensureIssued(o.dir, id.base, *ca, *ca_key, req);
    if (!issued) return issued.error();
    std::string path = o.dir + "/" + id.base + ".kubeconfig";
    if (!o.server_url.empty() &&
        !writeFileAtomically(
            path, kubeconfigText(o.server_url, *ca, id.base, issued->cert_pem, issued->key_pem), 0600))
      return ApiError::internal("pki: cannot write " + path);
  }

  // The ServiceAccount token signing key (ES256).
  if (!exists(o.dir + "/sa.key")) {
    KeyPtr key(EVP_EC_gen("P-256"));
    if (!key) return ApiError::internal("pki: cannot generate the service account key");
    std::string priv = pemOf([&](BIO* b) {
      return PEM_write_bio_PrivateKey(b, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
    });
    std::string pub = pemOf([&](BIO* b) { return PEM_write_bio_PUBKEY(b, key.get()); });
    if (priv.empty() || pub.empty() || !writeFileAtomically(o.dir + "/sa.pub", pub, 0644) ||
        !writeFileAtomically(o.dir + "/sa.key", priv, 0600))
      return ApiError::internal("pki: cannot write the service account key");
  }
  return true;
}

}  // namespace shepherd::pki
