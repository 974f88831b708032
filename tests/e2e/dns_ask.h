#pragma once
// A DNS query from an end-to-end test to a master's DNS on loopback, as a client's resolver
// sends it (ldns, dns/testing/wire.h), over UDP or TCP, and its answer as text.
//
// Thread-safety: pure functions.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dns/testing/wire.h"

namespace paceline::e2e {

// An answer's code and its A and SRV records as text.
struct Answer {
  int rcode = -1;
  std::set<std::string> records;  // "A 127.0.0.1", "SRV 31002 0.web.prod.paceline."
};

// Asks 127.0.0.1:`port` for `name`; nullopt when nothing (parseable) came back within 3 s.
inline std::optional<Answer> Ask(uint16_t port, const std::string& name, ldns_rr_type type,
                                 bool tcp) {
  const std::vector<uint8_t> wire = dns::testing::QueryWire(name, type, 4321);
  int fd = socket(AF_INET, tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::vector<uint8_t> reply(65536);
  ssize_t n = -1;
  pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
  if (tcp) {
    if (connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) == 0) {
      std::vector<uint8_t> framed = {static_cast<uint8_t>(wire.size() >> 8),
                                     static_cast<uint8_t>(wire.size() & 0xff)};
      framed.insert(framed.end(), wire.begin(), wire.end());
      uint8_t length[2];
      if (send(fd, framed.data(), framed.size(), MSG_NOSIGNAL) == ssize_t(framed.size()) &&
          poll(&p, 1, 3000) == 1 && recv(fd, length, 2, MSG_WAITALL) == 2) {
        n = recv(fd, reply.data(), size_t{length[0]} << 8 | length[1], MSG_WAITALL);
      }
    }
  } else {
    sendto(fd, wire.data(), wire.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to));
    if (poll(&p, 1, 3000) == 1) n = recv(fd, reply.data(), reply.size(), 0);
  }
  close(fd);
  if (n <= 0) return std::nullopt;
  dns::testing::Pkt parsed = dns::testing::Parse(reply.data(), static_cast<size_t>(n));
  if (parsed == nullptr) return std::nullopt;
  const ldns_pkt* r = parsed.get();
  Answer a{.rcode = ldns_pkt_get_rcode(r)};
  const ldns_rr_list* answers = ldns_pkt_answer(r);
  for (size_t i = 0; i < ldns_rr_list_rr_count(answers); ++i) {
    const ldns_rr* rr = ldns_rr_list_rr(answers, i);
    char* text = nullptr;
    if (ldns_rr_get_type(rr) == LDNS_RR_TYPE_A) {
      text = ldns_rdf2str(ldns_rr_rdf(rr, 0));
      a.records.insert(absl::StrCat("A ", text));
    } else if (ldns_rr_get_type(rr) == LDNS_RR_TYPE_SRV) {
      char* target = ldns_rdf2str(ldns_rr_rdf(rr, 3));
      text = ldns_rdf2str(ldns_rr_rdf(rr, 2));
      a.records.insert(absl::StrCat("SRV ", text, " ", target));
      free(target);
    }
    free(text);
  }
  return a;
}

}  // namespace paceline::e2e
