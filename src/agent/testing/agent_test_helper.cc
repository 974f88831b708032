// agent_test_helper: a small program the agent tests run as tasks (no python on a fresh host).
//
//   agent_test_helper http PORT FAILFILE   serve HTTP on 127.0.0.1:PORT: 200, or 500 while
//                                          FAILFILE exists
//   agent_test_helper alloc MIB            allocate and touch MIB MiB, then exit 0
//   agent_test_helper spew BYTES           write BYTES bytes of numbered lines to stdout
//   agent_test_helper daemon PIDFILE       fork a child that leaves the process group (setsid),
//                                          writes its pid to PIDFILE and sleeps; exit 0

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int Http(int port, const char* fail_file) {
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || ::listen(s, 16) != 0) {
    std::perror("bind/listen");
    return 1;
  }
  std::printf("listening on %d\n", port);
  std::fflush(stdout);
  for (;;) {
    int c = ::accept(s, nullptr, nullptr);
    if (c < 0) continue;
    char buf[1024];
    ssize_t n = ::read(c, buf, sizeof(buf));
    (void)n;
    bool fail = ::access(fail_file, F_OK) == 0;
    const char* resp = fail ? "HTTP/1.0 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n"
                            : "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok";
    ssize_t w = ::write(c, resp, std::strlen(resp));
    (void)w;
    ::close(c);
  }
}

int Alloc(long mib) {
  std::vector<char*> blocks;
  for (long i = 0; i < mib; ++i) {
    char* p = static_cast<char*>(std::malloc(1 << 20));
    if (p == nullptr) return 2;
    std::memset(p, 1, 1 << 20);
    blocks.push_back(p);
  }
  std::printf("allocated %ld MiB\n", mib);
  return 0;
}

int Spew(long bytes) {
  long written = 0;
  for (long line = 0; written < bytes; ++line) {
    std::string s = "line " + std::to_string(line) + "\n";
    if (written + static_cast<long>(s.size()) > bytes) s.resize(bytes - written);
    std::fwrite(s.data(), 1, s.size(), stdout);
    written += static_cast<long>(s.size());
  }
  return 0;
}

int Daemon(const char* pid_file) {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setsid();
    // Written whole, then renamed: the file appears only with the pid in it.
    std::string tmp = std::string(pid_file) + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "w");
    if (f != nullptr) {
      std::fprintf(f, "%d\n", ::getpid());
      std::fclose(f);
      std::rename(tmp.c_str(), pid_file);
    }
    for (;;) ::pause();
  }
  // Exit only once the daemon has written its pid (a loaded machine may take seconds).
  for (int i = 0; i < 30000 && ::access(pid_file, F_OK) != 0; ++i) ::usleep(1000);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "http") == 0) return Http(std::atoi(argv[2]), argv[3]);
  if (argc == 3 && std::strcmp(argv[1], "alloc") == 0) return Alloc(std::atol(argv[2]));
  if (argc == 3 && std::strcmp(argv[1], "spew") == 0) return Spew(std::atol(argv[2]));
  if (argc == 3 && std::strcmp(argv[1], "daemon") == 0) return Daemon(argv[2]);
  std::fprintf(stderr, "usage: agent_test_helper http|alloc|spew|daemon ...\n");
  return 2;
}
