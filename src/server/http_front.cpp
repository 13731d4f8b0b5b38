#include "http_front.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "nextok/error.hpp"

namespace nextok::server {

using Clock = std::chrono::steady_clock;

// One client connection. The poll thread owns it except while a worker holds
// its request (kBusy); the fd is closed only when the last owner lets go.
struct Conn {
  // kDrain: answered and half-closed; input is read and dropped for a moment
  // so the client sees the answer rather than a reset. kParked: a whole
  // request on a connection accepted past the caps, waiting briefly for its
  // peer to get back under them.
  enum class State { kHead, kBody, kBusy, kDrain, kParked };
  int fd = -1;
  std::string peer;
  std::string in;  // received, not yet consumed (pipelined requests wait here)
  State state = State::kHead;
  Clock::time_point deadline;
  bool reserved = false;  // accepted past the caps: cheap routes only
  bool counted = true;    // in per_peer (a draining connection no longer is)
  std::size_t served = 0;
  HttpRequest req;  // kBody: the head, waiting for its body

  std::atomic<bool> gone{false};
  std::mutex mu;
  std::function<void()> on_gone;  // guarded by mu
  bool fired = false;             // guarded by mu

  ~Conn() {
    if (fd >= 0) ::close(fd);
  }
  // Marks the client gone and runs the callback once.
  void hang_up() {
    std::function<void()> f;
    {
      std::lock_guard lock(mu);
      gone.store(true);
      if (fired) return;
      fired = true;
      f = std::move(on_gone);
    }
    if (f) f();
  }
};

struct HttpFront::Impl {
  FrontOptions opt;
  Routes routes;
  int listen_fd = -1;
  int wake_fd = -1;
  std::atomic<bool> stopping{false};

  std::map<int, std::shared_ptr<Conn>> conns;   // poll thread only
  std::map<std::string, std::size_t> per_peer;  // poll thread only
  std::size_t reserved = 0;                     // poll thread only

  mutable std::mutex mu;                                         // guards returned, tasks, stats
  std::vector<std::pair<std::shared_ptr<Conn>, bool>> returned;  // (conn, keep)
  std::deque<std::unique_ptr<Exchange>> tasks;
  std::condition_variable task_cv;
  FrontStats stats;
  std::vector<std::thread> workers;
  HttpFront* self = nullptr;

  void wake() const {
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto n = ::write(wake_fd, &one, sizeof one);
  }

  // Short answers from the poll thread: never blocks; a client that does
  // not take a few KB of answer is dropped.
  static bool send_now(int fd, std::string_view data) {
    while (!data.empty()) {
      const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  static std::string serialize(const HttpResponse& r, bool keep) {
    std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + status_reason(r.status) +
                      "\r\nContent-Type: " + r.content_type +
                      "\r\nContent-Length: " + std::to_string(r.body.size()) + "\r\n";
    for (const auto& [k, v] : r.headers) out += k + ": " + v + "\r\n";
    out += keep ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
    out += r.body;
    return out;
  }

  void refuse(Conn& c, const HeadError& e) {
    send_now(c.fd, serialize(routes.error(e), false));
    linger(c);
  }

  // A connection the server has decided to close stops counting against the
  // caps at once: its client may already be opening the next one.
  void linger(Conn& c) {
    uncount(c);
    ::shutdown(c.fd, SHUT_WR);
    c.state = Conn::State::kDrain;
    c.in.clear();
    c.deadline = Clock::now() + std::chrono::seconds(2);
  }

  void close_conn(int fd) {
    const auto it = conns.find(fd);
    if (it == conns.end()) return;
    uncount(*it->second);
    conns.erase(it);
    std::lock_guard lock(mu);
    stats.open = conns.size();
  }

  void uncount(Conn& c) {
    if (!c.counted) return;
    c.counted = false;
    if (--per_peer[c.peer] == 0) per_peer.erase(c.peer);
    unreserve(c);
  }

  void unreserve(Conn& c) {
    if (!c.reserved) return;
    c.reserved = false;
    --reserved;
  }

  bool under_caps(const Conn& c) const {
    const auto it = per_peer.find(c.peer);
    return (it == per_peer.end() || it->second <= opt.max_per_peer) &&
           conns.size() <= opt.max_connections;
  }

  void accept_all() {
    for (;;) {
      sockaddr_storage addr{};
      socklen_t len = sizeof addr;
      const int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len,
                               SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        return;  // EAGAIN, or out of descriptors: poll again later
      }
      char host[NI_MAXHOST] = "?";
      ::getnameinfo(reinterpret_cast<sockaddr*>(&addr), len, host, sizeof host, nullptr, 0,
                    NI_NUMERICHOST);
      const int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      auto c = std::make_shared<Conn>();
      c->fd = fd;
      c->peer = host;
      const bool over =
          conns.size() >= opt.max_connections || per_peer[c->peer] >= opt.max_per_peer;
      if (over && reserved >= opt.reserve) {
        if (per_peer[c->peer] == 0) per_peer.erase(c->peer);
        c->counted = false;
        refuse(*c, {503, "too many connections; retry later"});
        std::lock_guard lock(mu);
        ++stats.refused;
        continue;  // ~Conn closes it
      }
      c->reserved = over;
      if (over) ++reserved;
      // A reserved connection is for a quick GET: it gets a short deadline.
      const auto limit =
          over ? std::min(opt.header_timeout, std::chrono::milliseconds(2000)) : opt.header_timeout;
      c->deadline = Clock::now() + limit;
      ++per_peer[c->peer];
      conns.emplace(fd, std::move(c));
      std::lock_guard lock(mu);
      stats.open = conns.size();
    }
  }

  // Reads what is there; false when the connection is finished.
  bool read_more(Conn& c) {
    char buf[16384];
    for (;;) {
      const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
      if (n > 0) {
        if (c.state == Conn::State::kDrain) continue;
        c.in.append(buf, static_cast<std::size_t>(n));
        if (c.in.size() > wanted(c)) return true;  // enough buffered; parse first
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      return false;  // EOF or error: nothing can be answered now
    }
  }

  // How much input a connection may buffer: the head, or the body plus the
  // start of a pipelined head.
  std::size_t wanted(const Conn& c) const {
    return (c.state == Conn::State::kBody ? c.req.content_length : 0) + opt.limits.max_head_bytes;
  }

  // Parses and answers what the buffer holds; false when the connection is
  // to be closed.
  bool advance(const std::shared_ptr<Conn>& cp) {
    Conn& c = *cp;
    for (;;) {
      if (c.state == Conn::State::kHead) {
        if (c.in.empty()) return true;
        HeadResult r = parse_head(c.in, opt.limits);
        if (r.kind == HeadResult::Kind::kIncomplete) return true;
        if (r.kind == HeadResult::Kind::kError) {
          refuse(c, r.error);
          return true;
        }
        c.req = std::move(r.request);
        c.req.peer = c.peer;
        c.in.erase(0, r.head_len);
        if (c.req.expect_continue && c.req.content_length > c.in.size())
          send_now(c.fd, "HTTP/1.1 100 Continue\r\n\r\n");
        c.state = Conn::State::kBody;
        c.deadline = Clock::now() + opt.body_timeout;
      }
      if (c.state != Conn::State::kBody || c.in.size() < c.req.content_length) return true;
      c.req.body = c.in.substr(0, c.req.content_length);
      c.in.erase(0, c.req.content_length);
      ++c.served;
      // The caps count connections, and a client's previous connection may
      // be let go only after its next one was accepted (the worker is still
      // finishing the exchange, or its close is in flight): a reserved
      // connection whose peer is back under the caps is an ordinary one.
      if (c.reserved && under_caps(c)) unreserve(c);
      const bool keep = c.req.keep_alive && !c.reserved &&
                        c.served < opt.max_requests_per_connection && !stopping;
      if (auto quick = routes.quick(c.req)) {
        if (!send_now(c.fd, serialize(*quick, keep))) return false;
        if (!keep) {
          linger(c);
          return true;
        }
        c.state = Conn::State::kHead;
        c.deadline = Clock::now() + opt.header_timeout;
        continue;  // a pipelined request may be buffered already
      }
      if (c.reserved) {
        c.state = Conn::State::kParked;
        c.deadline = Clock::now() + std::min(opt.header_timeout, kParkWait);
        return true;
      }
      dispatch(cp);
      return true;
    }
  }

  // How long a request past the caps waits for room before it hears 503.
  static constexpr std::chrono::milliseconds kParkWait{2000};

  void dispatch(const std::shared_ptr<Conn>& cp) {
    cp->state = Conn::State::kBusy;
    auto ex = std::make_unique<Exchange>(*self, cp, std::move(cp->req));
    cp->req = {};
    {
      std::lock_guard lock(mu);
      tasks.push_back(std::move(ex));
    }
    task_cv.notify_one();
  }

  // Parked requests go ahead once their peer is under the caps again, or
  // hear 503 when the wait is over.
  void admit_parked(Clock::time_point now) {
    for (const auto& [fd, c] : conns) {
      if (c->state != Conn::State::kParked) continue;
      if (under_caps(*c)) {
        unreserve(*c);
        dispatch(c);
        std::lock_guard lock(mu);
        ++stats.waited;
      } else if (now >= c->deadline) {
        refuse(*c, {503, "too many connections; only /health is answered now"});
        std::lock_guard lock(mu);
        ++stats.turned_away;
      }
    }
  }

  void take_back() {
    std::vector<std::pair<std::shared_ptr<Conn>, bool>> back;
    {
      std::lock_guard lock(mu);
      back.swap(returned);
    }
    for (auto& [c, keep] : back) {
      if (c->gone) {
        close_conn(c->fd);
        continue;
      }
      if (!keep) {
        linger(*c);
        continue;
      }
      {
        std::lock_guard lock(c->mu);
        c->on_gone = nullptr;
      }
      c->state = Conn::State::kHead;
      c->deadline = Clock::now() + opt.header_timeout;
      if (!advance(c)) close_conn(c->fd);
    }
  }

  void expire(Clock::time_point now) {
    std::vector<int> late;
    for (const auto& [fd, c] : conns)
      if (c->state != Conn::State::kBusy && c->state != Conn::State::kParked && now >= c->deadline)
        late.push_back(fd);
    for (const int fd : late) {
      const std::shared_ptr<Conn> cp = conns[fd];
      Conn& c = *cp;
      // An idle keep-alive connection just closes; a half-sent request hears why.
      if (c.state == Conn::State::kHead ? !c.in.empty() : c.state == Conn::State::kBody) {
        refuse(c, {408, c.state == Conn::State::kHead
                            ? "the request head did not arrive within the header timeout"
                            : "the request body did not arrive within the body timeout"});
        std::lock_guard lock(mu);
        ++stats.timed_out;
      }
      close_conn(fd);
    }
  }

  void loop() {
    std::vector<pollfd> fds;
    std::vector<std::shared_ptr<Conn>> polled;
    while (!stopping) {
      fds.clear();
      polled.clear();
      const bool room = conns.size() < opt.max_connections + opt.reserve + 64;
      fds.push_back({wake_fd, POLLIN, 0});
      fds.push_back({listen_fd, static_cast<short>(room ? POLLIN : 0), 0});
      auto next = Clock::now() + std::chrono::seconds(1);
      std::size_t buffered = 0;
      for (const auto& [fd, c] : conns) buffered += c->in.size();
      const bool full = buffered >= opt.max_buffered_bytes;
      for (const auto& [fd, c] : conns) {
        short ev = 0;
        if (c->state == Conn::State::kBusy) {
          if (c->gone) continue;  // reported once; POLLHUP would repeat forever
          ev = POLLRDHUP;
        } else if (c->state == Conn::State::kParked) {
          ev = POLLRDHUP;
          next = std::min(next, c->deadline);
        } else {
          const bool read = c->in.size() <= wanted(*c) && !(full && c->state == Conn::State::kBody);
          ev = static_cast<short>(read ? POLLIN | POLLRDHUP : 0);
          next = std::min(next, c->deadline);
        }
        fds.push_back({fd, ev, 0});
        polled.push_back(c);
      }
      const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now());
      const int n =
          ::poll(fds.data(), fds.size(), static_cast<int>(std::max<long>(0, wait.count() + 1)));
      if (n < 0 && errno != EINTR) break;
      if (fds[0].revents & POLLIN) {
        std::uint64_t v = 0;
        [[maybe_unused]] const auto r = ::read(wake_fd, &v, sizeof v);
      }
      for (std::size_t i = 0; i < polled.size(); ++i) {
        const short rev = fds[i + 2].revents;
        if (!rev) continue;
        const std::shared_ptr<Conn>& c = polled[i];
        if (c->state == Conn::State::kBusy) {
          if (rev & (POLLRDHUP | POLLHUP | POLLERR)) {
            c->hang_up();
            std::lock_guard lock(mu);
            ++stats.disconnects;
          }
          continue;
        }
        if (c->state == Conn::State::kParked) {
          if (rev & (POLLRDHUP | POLLHUP | POLLERR)) close_conn(c->fd);
          continue;
        }
        if (!read_more(*c) || !advance(c)) close_conn(c->fd);
      }
      take_back();
      admit_parked(Clock::now());
      expire(Clock::now());
      if (fds[1].revents & POLLIN) accept_all();
    }
    // Stopping: unblock workers still writing, and let every client go.
    for (auto& [fd, c] : conns) {
      ::shutdown(fd, SHUT_RDWR);
      c->hang_up();
    }
  }

  void work() {
    for (;;) {
      std::unique_ptr<Exchange> ex;
      {
        std::unique_lock lock(mu);
        task_cv.wait(lock, [&] { return stopping || !tasks.empty(); });
        if (tasks.empty()) return;
        ex = std::move(tasks.front());
        tasks.pop_front();
      }
      try {
        routes.slow(*ex);
      } catch (...) {
        if (!ex->started()) ex->respond(routes.error({500, "internal error"}));
      }
    }
  }
};

// --- Exchange -----------------------------------------------------------------

Exchange::Exchange(HttpFront& front, std::shared_ptr<Conn> conn, HttpRequest request)
    : front_(front), conn_(std::move(conn)), request_(std::move(request)) {
  const auto& o = front_.impl_->opt;
  keep_ = request_.keep_alive && conn_->served < o.max_requests_per_connection;
}

Exchange::~Exchange() {
  HttpFront::Impl& f = *front_.impl_;
  const bool keep = keep_ && ok_ && started_ && !conn_->gone;
  {
    std::lock_guard lock(f.mu);
    f.returned.emplace_back(std::move(conn_), keep);
  }
  f.wake();
}

bool Exchange::gone() const noexcept {
  return conn_->gone.load();
}
const std::atomic<bool>& Exchange::gone_flag() const noexcept {
  return conn_->gone;
}

void Exchange::on_gone(std::function<void()> f) {
  {
    std::lock_guard lock(conn_->mu);
    if (!conn_->fired) {
      conn_->on_gone = std::move(f);
      return;
    }
  }
  if (f) f();
}

bool Exchange::send_all(std::string_view data) {
  if (!ok_ || conn_->gone) return ok_ = false;
  const auto deadline = Clock::now() + front_.impl_->opt.write_timeout;
  while (!data.empty()) {
    const ssize_t n = ::send(conn_->fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      pollfd p{conn_->fd, POLLOUT, 0};
      if (left > 0 && ::poll(&p, 1, static_cast<int>(std::min<long>(left, 1000))) >= 0 &&
          !conn_->gone)
        continue;
    }
    conn_->hang_up();  // a failed write: the client is as good as gone
    return ok_ = false;
  }
  return true;
}

std::string Exchange::head(int status, std::string_view content_type, const std::string* length,
                           const std::vector<std::pair<std::string, std::string>>& headers,
                           bool chunked) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + status_reason(status) +
                    "\r\nContent-Type: " + std::string(content_type) + "\r\n";
  if (length) out += "Content-Length: " + *length + "\r\n";
  if (chunked) out += "Transfer-Encoding: chunked\r\n";
  for (const auto& [k, v] : headers) out += k + ": " + v + "\r\n";
  out += keep_ ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  return out;
}

bool Exchange::respond(const HttpResponse& r) {
  if (started_) return false;
  started_ = true;
  const std::string len = std::to_string(r.body.size());
  return send_all(head(r.status, r.content_type, &len, r.headers, false) + r.body);
}

bool Exchange::begin_stream(int status, std::string_view content_type,
                            const std::vector<std::pair<std::string, std::string>>& headers) {
  if (started_) return false;
  started_ = true;
  chunked_ = request_.version == "HTTP/1.1";
  if (!chunked_) keep_ = false;  // HTTP/1.0: the body ends when the connection does
  return send_all(head(status, content_type, nullptr, headers, chunked_));
}

bool Exchange::write_chunk(std::string_view data) {
  if (data.empty()) return ok_;
  if (!chunked_) return send_all(data);
  char size[32];
  const int n = std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  std::string out(size, static_cast<std::size_t>(n));
  out.append(data);
  out += "\r\n";
  return send_all(out);
}

bool Exchange::end_stream() {
  return chunked_ ? send_all("0\r\n\r\n") : ok_;
}

// --- HttpFront ------------------------------------------------------------------

HttpFront::HttpFront(FrontOptions options, Routes routes) : impl_(std::make_unique<Impl>()) {
  impl_->opt = std::move(options);
  impl_->routes = std::move(routes);
  impl_->self = this;
  impl_->wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (impl_->wake_fd < 0) throw Error(ErrorCode::kIo, "server", "eventfd failed");
}

HttpFront::~HttpFront() {
  stop();
  std::deque<std::unique_ptr<Exchange>> left;  // destroyed unlocked: ~Exchange locks mu
  {
    std::lock_guard lock(impl_->mu);
    left.swap(impl_->tasks);
  }
  left.clear();
  impl_->task_cv.notify_all();
  for (auto& w : impl_->workers)
    if (w.joinable()) w.join();
  impl_->conns.clear();
  if (impl_->listen_fd >= 0) ::close(impl_->listen_fd);
  ::close(impl_->wake_fd);
}

int HttpFront::bind() {
  const FrontOptions& o = impl_->opt;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const std::string port = std::to_string(o.port);
  auto fail = [&] {
    return Error(
        ErrorCode::kIo, "port",
        "cannot listen on " + o.host + ":" + port + " (in use, or not an address of this machine)");
  };
  if (::getaddrinfo(o.host.c_str(), port.c_str(), &hints, &res) != 0 || !res) throw fail();
  int fd = -1;
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && ::listen(fd, 1024) == 0) break;
    ::close(fd);
    fd = -1;
  }
  ::freeaddrinfo(res);
  if (fd < 0) throw fail();
  impl_->listen_fd = fd;
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  return addr.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port)
                                    : ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
}

void HttpFront::run() {
  Impl& f = *impl_;
  for (unsigned i = 0; i < std::max(1u, f.opt.workers); ++i)
    f.workers.emplace_back([&f] { f.work(); });
  f.loop();
  f.task_cv.notify_all();
  for (auto& w : f.workers) w.join();
  f.workers.clear();
  f.take_back();
  f.conns.clear();
}

void HttpFront::stop() {
  impl_->stopping = true;
  impl_->task_cv.notify_all();
  impl_->wake();
}

FrontStats HttpFront::stats() const {
  std::lock_guard lock(impl_->mu);
  return impl_->stats;
}

}  // namespace nextok::server
