// Test support (header only, for *_test.cpp): a tiny loopback HTTP server (POSIX sockets, 127.0.0.1,
// port 0) that replays a scripted answer, a test double for llama-server's HTTP side (the recorded
// stream it usually sends is in testing/recorded_chat.h).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace fp::testing {

// What the server sends on every connection: wait delay_ms, then write bytes.
struct Step {
  int delay_ms = 0;
  std::string bytes;
};
enum class Framing { kChunked, kContentLength, kCloseDelimited };
struct Script {
  std::string status = "200 OK";
  std::string content_type = "text/event-stream";
  Framing framing = Framing::kChunked;
  std::vector<Step> steps;
  int hold_ms = 0;  // after the steps, keep the connection open (silent) this long
};

// One chunk-delimited step per SSE event of `events`, the first after first_delay_ms, the
// others gap_ms apart.
inline std::vector<Step> event_steps(const std::vector<std::string>& events, int first_delay_ms, int gap_ms) {
  std::vector<Step> steps;
  for (size_t i = 0; i < events.size(); ++i) {
    steps.push_back({i == 0 ? first_delay_ms : gap_ms, events[i] + "\n\n"});
  }
  return steps;
}

class LoopbackServer {
 public:
  explicit LoopbackServer(Script script) : script_(std::move(script)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listen_fd_, 16) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      throw std::runtime_error("loopback test server: cannot listen on 127.0.0.1");
    }
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }

  ~LoopbackServer() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    acceptor_.join();
    for (auto& t : workers_) t.join();
    ::close(listen_fd_);
  }

  int port() const { return port_; }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  std::vector<std::string> requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  int max_concurrent() const { return max_active_; }

 private:
  void accept_loop() {
    while (!stopping()) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) continue;
      std::lock_guard<std::mutex> lock(mu_);
      workers_.emplace_back([this, fd] { serve(fd); });
    }
  }

  bool stopping() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stop_;
  }

  // Sleeps ms unless the server stops; false when stopping.
  bool wait_ms(int ms) {
    std::unique_lock<std::mutex> lock(mu_);
    return !cv_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return stop_; });
  }

  static void send_all(int fd, const std::string& s) {
    size_t off = 0;
    while (off < s.size()) {
      ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return;
      off += static_cast<size_t>(n);
    }
  }

  static std::string read_request(int fd) {
    std::string req;
    char buf[4096];
    size_t need = std::string::npos;
    while (need == std::string::npos || req.size() < need) {
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      req.append(buf, static_cast<size_t>(n));
      size_t end = req.find("\r\n\r\n");
      if (need == std::string::npos && end != std::string::npos) {
        size_t body = 0;
        std::string lower = req.substr(0, end);
        std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
        size_t cl = lower.find("content-length:");
        if (cl != std::string::npos) body = std::stoul(lower.substr(cl + 15));
        need = end + 4 + body;
      }
    }
    return req;
  }

  void serve(int fd) {
    std::string req = read_request(fd);
    int now = ++active_;
    int seen = max_active_.load();
    while (now > seen && !max_active_.compare_exchange_weak(seen, now)) {
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(req);
    }
    std::string head = "HTTP/1.1 " + script_.status + "\r\nContent-Type: " + script_.content_type + "\r\n";
    if (script_.framing == Framing::kChunked) head += "Transfer-Encoding: chunked\r\n";
    if (script_.framing == Framing::kContentLength) {
      size_t total = 0;
      for (const auto& s : script_.steps) total += s.bytes.size();
      head += "Content-Length: " + std::to_string(total) + "\r\n";
    }
    send_all(fd, head + "Connection: close\r\n\r\n");
    // Counted as finished before the write that completes the response: the client may start
    // its next request the moment that write lands.
    bool counted = true;
    auto finishing = [&] {
      if (counted) --active_;
      counted = false;
    };
    bool alive = true;
    for (size_t i = 0; i < script_.steps.size(); ++i) {
      const Step& step = script_.steps[i];
      if (!(alive = wait_ms(step.delay_ms))) break;
      if (script_.framing != Framing::kChunked) {
        if (i + 1 == script_.steps.size() && script_.framing == Framing::kContentLength) finishing();
        send_all(fd, step.bytes);
      } else if (!step.bytes.empty()) {
        char size[32];
        std::snprintf(size, sizeof size, "%zx\r\n", step.bytes.size());
        send_all(fd, size + step.bytes + "\r\n");
      }
    }
    if (alive && script_.hold_ms > 0) alive = wait_ms(script_.hold_ms);
    finishing();
    if (alive && script_.framing == Framing::kChunked) send_all(fd, "0\r\n\r\n");
    ::shutdown(fd, SHUT_RDWR);
    ::close(fd);
  }

  Script script_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::thread acceptor_;
  std::vector<std::thread> workers_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<std::string> requests_;
  std::atomic<int> active_{0};
  std::atomic<int> max_active_{0};
};

}  // namespace fp::testing
