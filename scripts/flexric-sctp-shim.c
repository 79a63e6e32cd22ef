// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The tcran authors.
//
// LD_PRELOAD shim: FlexRIC's SCTP sockets carried over TCP with the framing
// tcran speaks where a kernel has no SCTP (docs/e2.md, "Transport"): one SCTP
// message = one frame of a 4-byte big-endian length N (1..65536) and N bytes
// of E2AP; one TCP connection = one association. Written for FlexRIC
// (openaicellular/flexric c74bcef0), which only ever does this with SCTP:
//
//   socket(AF_INET, SOCK_SEQPACKET, IPPROTO_SCTP)  one-to-many socket
//   bind + listen                                   the RIC (E2 and E42)
//   setsockopt/getsockopt(IPPROTO_SCTP, ...)        events, nodelay, autoclose
//   sctp_sendmsg(fd, buf, len, to, ...)             a client's first send
//                                                   opens its association
//   sctp_recvmsg(fd, buf, len, from, ..., &flags)   data, or a notification
//                                                   (MSG_NOTIFICATION)
//   close(fd)
//
// so that is all it emulates. The application gets one end of an AF_UNIX
// SOCK_SEQPACKET pair (epoll works on it); a thread per socket accepts and
// reads the TCP connections and queues every frame, tagged with its peer's
// address, on the other end. A connection that ends is delivered as
// SCTP_SHUTDOWN_EVENT, the one notification FlexRIC's RIC handles.
//
// Ports: FlexRIC hard-codes 36421 (E2) and 36422 (E42). Environment:
//   FLEXRIC_SHIM_PORT_MAP="36421=0,36422=0"  bind/connect port P as Q
//                                            (Q = 0: the kernel picks)
//   FLEXRIC_SHIM_PORTS_FILE=path             each listen appends "P Q\n":
//                                            FlexRIC's port, the one it got
//   FLEXRIC_SHIM_TRACE=path                  one line per message sent or
//                                            received: "tx|rx UNIX_US LEN B0B1",
//                                            B0B1 the PDU's first two bytes in hex
//                                            (APER: message type, procedure code)
// so a test can run several RICs side by side, learn their ports and time
// indications and controls on the wire. stdout is made line-buffered, so
// FlexRIC's printouts survive a kill.
//
// Build: gcc -shared -fPIC -o libsctp-over-tcp.so flexric-sctp-shim.c -ldl -lpthread
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/sctp.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

enum { MAX_SOCKETS = 16, MAX_CONNS = 64, MAX_FRAME = 65536 };

struct conn {
    int tcp;
    struct sockaddr_in peer;
};

struct shim_socket {
    int used;
    int app;         // handed to the application
    int queue;       // the thread writes frames here
    int wake[2];     // a new connection or close: poll again
    int listener;    // TCP listener (RIC side), -1 otherwise
    uint16_t asked_port;  // the port FlexRIC bound, before the map
    int closing;
    pthread_t thread;
    int thread_started;
    pthread_mutex_t mtx;  // conns and sends
    struct conn conns[MAX_CONNS];
    int n_conns;
};

// What precedes each queued frame on the AF_UNIX pair.
struct queued_header {
    struct sockaddr_in from;
    int flags;  // 0 or MSG_NOTIFICATION | MSG_EOR
};

static struct shim_socket sockets[MAX_SOCKETS];
static pthread_mutex_t table_mtx = PTHREAD_MUTEX_INITIALIZER;

static int (*real_socket)(int, int, int);
static int (*real_bind)(int, const struct sockaddr *, socklen_t);
static int (*real_listen)(int, int);
static int (*real_close)(int);
static int (*real_setsockopt)(int, int, int, const void *, socklen_t);
static int (*real_getsockopt)(int, int, int, void *, socklen_t *);

static FILE *trace;
static pthread_mutex_t trace_mtx = PTHREAD_MUTEX_INITIALIZER;

__attribute__((constructor)) static void init_shim(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *path = getenv("FLEXRIC_SHIM_TRACE");
    if (path) {
        trace = fopen(path, "a");
        if (trace) setvbuf(trace, NULL, _IOLBF, 0);
    }
}

static void trace_message(const char *dir, const void *pdu, size_t len) {
    if (!trace) return;
    struct timeval tv;
    gettimeofday(&tv, NULL);
    const unsigned char *b = pdu;
    pthread_mutex_lock(&trace_mtx);
    fprintf(trace, "%s %lld %zu %02x%02x\n", dir, (long long)tv.tv_sec * 1000000 + tv.tv_usec, len,
            len > 0 ? b[0] : 0, len > 1 ? b[1] : 0);
    pthread_mutex_unlock(&trace_mtx);
}

static void resolve(void) {
    if (real_socket) return;
    real_bind = dlsym(RTLD_NEXT, "bind");
    real_listen = dlsym(RTLD_NEXT, "listen");
    real_close = dlsym(RTLD_NEXT, "close");
    real_setsockopt = dlsym(RTLD_NEXT, "setsockopt");
    real_getsockopt = dlsym(RTLD_NEXT, "getsockopt");
    real_socket = dlsym(RTLD_NEXT, "socket");
}

static struct shim_socket *find(int fd) {
    if (fd < 0) return NULL;
    for (int i = 0; i < MAX_SOCKETS; i++)
        if (sockets[i].used && sockets[i].app == fd) return &sockets[i];
    return NULL;
}

// FLEXRIC_SHIM_PORT_MAP="36421=0,36422=40001": the port to use for `port`.
static uint16_t mapped_port(uint16_t port) {
    const char *map = getenv("FLEXRIC_SHIM_PORT_MAP");
    while (map && *map) {
        unsigned from, to;
        int used = 0;
        if (sscanf(map, "%u=%u%n", &from, &to, &used) != 2) break;
        if (from == port) return (uint16_t)to;
        map += used;
        if (*map == ',') map++;
    }
    return port;
}

static int write_all(int fd, const void *buf, size_t len) {
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int read_all(int fd, void *buf, size_t len) {
    char *p = buf;
    while (len > 0) {
        ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static void queue_message(struct shim_socket *s, const struct sockaddr_in *from, int flags,
                          const void *payload, size_t len) {
    struct queued_header header = {.from = *from, .flags = flags};
    struct iovec iov[2] = {{&header, sizeof header}, {(void *)payload, len}};
    struct msghdr msg = {.msg_iov = iov, .msg_iovlen = 2};
    while (sendmsg(s->queue, &msg, 0) < 0 && errno == EINTR) {
    }
}

// The association is gone: tell FlexRIC as SCTP would.
static void queue_shutdown(struct shim_socket *s, const struct sockaddr_in *peer) {
    struct sctp_shutdown_event event = {.sse_type = SCTP_SHUTDOWN_EVENT,
                                        .sse_length = sizeof event};
    queue_message(s, peer, MSG_NOTIFICATION | MSG_EOR, &event, sizeof event);
}

static void add_conn(struct shim_socket *s, int tcp, const struct sockaddr_in *peer) {
    int one = 1;
    real_setsockopt(tcp, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    pthread_mutex_lock(&s->mtx);
    if (s->n_conns < MAX_CONNS) {
        s->conns[s->n_conns].tcp = tcp;
        s->conns[s->n_conns].peer = *peer;
        s->n_conns++;
    } else {
        real_close(tcp);
    }
    pthread_mutex_unlock(&s->mtx);
    char c = 0;
    (void)!write(s->wake[1], &c, 1);
}

static void drop_conn(struct shim_socket *s, int tcp) {
    struct sockaddr_in peer = {0};
    int found = 0;
    pthread_mutex_lock(&s->mtx);
    for (int i = 0; i < s->n_conns; i++) {
        if (s->conns[i].tcp == tcp) {
            peer = s->conns[i].peer;
            s->conns[i] = s->conns[--s->n_conns];
            found = 1;
            break;
        }
    }
    pthread_mutex_unlock(&s->mtx);
    if (!found) return;
    real_close(tcp);
    if (!s->closing) queue_shutdown(s, &peer);
}

static void *pump(void *arg) {
    struct shim_socket *s = arg;
    static __thread unsigned char frame[MAX_FRAME];
    while (!s->closing) {
        struct pollfd fds[MAX_CONNS + 2];
        struct sockaddr_in peers[MAX_CONNS + 2];
        int n = 0;
        fds[n++] = (struct pollfd){.fd = s->wake[0], .events = POLLIN};
        if (s->listener >= 0) fds[n++] = (struct pollfd){.fd = s->listener, .events = POLLIN};
        int first_conn = n;
        pthread_mutex_lock(&s->mtx);
        for (int i = 0; i < s->n_conns; i++) {
            peers[n] = s->conns[i].peer;
            fds[n++] = (struct pollfd){.fd = s->conns[i].tcp, .events = POLLIN};
        }
        pthread_mutex_unlock(&s->mtx);
        if (poll(fds, (nfds_t)n, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (fds[0].revents) {
            char drain[64];
            (void)!read(s->wake[0], drain, sizeof drain);
        }
        if (s->listener >= 0 && fds[1].revents & POLLIN) {
            struct sockaddr_in peer;
            socklen_t len = sizeof peer;
            int tcp = accept(s->listener, (struct sockaddr *)&peer, &len);
            if (tcp >= 0) add_conn(s, tcp, &peer);
        }
        for (int i = first_conn; i < n; i++) {
            if (!fds[i].revents) continue;
            uint32_t be_len;
            if (read_all(fds[i].fd, &be_len, 4) < 0) {
                drop_conn(s, fds[i].fd);
                continue;
            }
            uint32_t len = ntohl(be_len);
            if (len == 0) continue;  // the framing's keep-alive
            if (len > MAX_FRAME || read_all(fds[i].fd, frame, len) < 0) {
                fprintf(stderr, "[sctp-over-tcp] bad frame (%u bytes): association closed\n", len);
                drop_conn(s, fds[i].fd);
                continue;
            }
            trace_message("rx", frame, len);
            queue_message(s, &peers[i], 0, frame, len);
        }
    }
    return NULL;
}

static void start_pump(struct shim_socket *s) {
    if (s->thread_started) return;
    s->thread_started = 1;
    pthread_create(&s->thread, NULL, pump, s);
}

int socket(int domain, int type, int protocol) {
    resolve();
    if (protocol != IPPROTO_SCTP) return real_socket(domain, type, protocol);
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0) return -1;
    int big = 4 << 20;  // a burst of 64 KiB indications must not block the pump
    real_setsockopt(pair[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    real_setsockopt(pair[0], SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    pthread_mutex_lock(&table_mtx);
    struct shim_socket *s = NULL;
    for (int i = 0; i < MAX_SOCKETS; i++) {
        if (!sockets[i].used) {
            s = &sockets[i];
            break;
        }
    }
    if (!s || pipe2(s->wake, O_CLOEXEC) < 0) {
        pthread_mutex_unlock(&table_mtx);
        real_close(pair[0]);
        real_close(pair[1]);
        errno = EMFILE;
        return -1;
    }
    s->app = pair[0];
    s->queue = pair[1];
    s->listener = -1;
    s->closing = 0;
    s->thread_started = 0;
    s->n_conns = 0;
    pthread_mutex_init(&s->mtx, NULL);
    s->used = 1;
    pthread_mutex_unlock(&table_mtx);
    return s->app;
}

int bind(int fd, const struct sockaddr *addr, socklen_t len) {
    resolve();
    struct shim_socket *s = find(fd);
    if (!s) return real_bind(fd, addr, len);
    if (addr->sa_family != AF_INET) {
        errno = EAFNOSUPPORT;
        return -1;
    }
    struct sockaddr_in local = *(const struct sockaddr_in *)addr;
    local.sin_port = htons(mapped_port(ntohs(local.sin_port)));
    int tcp = real_socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (tcp < 0) return -1;
    int one = 1;
    real_setsockopt(tcp, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (real_bind(tcp, (struct sockaddr *)&local, sizeof local) < 0) {
        int saved = errno;
        real_close(tcp);
        errno = saved;
        return -1;
    }
    s->listener = tcp;
    s->asked_port = ntohs(((const struct sockaddr_in *)addr)->sin_port);
    return 0;
}

int listen(int fd, int backlog) {
    resolve();
    struct shim_socket *s = find(fd);
    if (!s) return real_listen(fd, backlog);
    if (s->listener < 0 || real_listen(s->listener, backlog) < 0) return -1;
    struct sockaddr_in got;
    socklen_t len = sizeof got;
    getsockname(s->listener, (struct sockaddr *)&got, &len);
    const char *ports_file = getenv("FLEXRIC_SHIM_PORTS_FILE");
    if (ports_file) {
        FILE *f = fopen(ports_file, "a");
        if (f) {
            fprintf(f, "%u %u\n", s->asked_port, ntohs(got.sin_port));
            fclose(f);
        }
    }
    start_pump(s);
    return 0;
}

int setsockopt(int fd, int level, int name, const void *value, socklen_t len) {
    resolve();
    if (find(fd)) return 0;  // SCTP events, nodelay, autoclose, linger: no TCP meaning
    return real_setsockopt(fd, level, name, value, len);
}

int getsockopt(int fd, int level, int name, void *value, socklen_t *len) {
    resolve();
    if (find(fd)) {
        if (value && len) memset(value, 0, *len);
        return 0;
    }
    return real_getsockopt(fd, level, name, value, len);
}

int close(int fd) {
    resolve();
    pthread_mutex_lock(&table_mtx);
    struct shim_socket *s = find(fd);
    if (!s) {
        pthread_mutex_unlock(&table_mtx);
        return real_close(fd);
    }
    s->closing = 1;
    pthread_mutex_lock(&s->mtx);
    for (int i = 0; i < s->n_conns; i++) shutdown(s->conns[i].tcp, SHUT_RDWR);
    pthread_mutex_unlock(&s->mtx);
    if (s->listener >= 0) shutdown(s->listener, SHUT_RDWR);
    char c = 0;
    (void)!write(s->wake[1], &c, 1);
    if (s->thread_started) pthread_join(s->thread, NULL);
    for (int i = 0; i < s->n_conns; i++) real_close(s->conns[i].tcp);
    if (s->listener >= 0) real_close(s->listener);
    real_close(s->wake[0]);
    real_close(s->wake[1]);
    real_close(s->queue);
    int rc = real_close(s->app);
    pthread_mutex_destroy(&s->mtx);
    s->used = 0;
    pthread_mutex_unlock(&table_mtx);
    return rc;
}

static int same_peer(const struct sockaddr_in *a, const struct sockaddr_in *b) {
    return a->sin_port == b->sin_port && a->sin_addr.s_addr == b->sin_addr.s_addr;
}

int sctp_sendmsg(int fd, const void *msg, size_t len, struct sockaddr *to, socklen_t tolen,
                 uint32_t ppid, uint32_t flags, uint16_t stream, uint32_t ttl, uint32_t context) {
    (void)tolen, (void)ppid, (void)flags, (void)stream, (void)ttl, (void)context;
    resolve();
    struct shim_socket *s = find(fd);
    if (!s || !to || to->sa_family != AF_INET) {
        errno = EBADF;
        return -1;
    }
    if (len == 0 || len > MAX_FRAME) {
        errno = EMSGSIZE;
        return -1;
    }
    struct sockaddr_in dest = *(const struct sockaddr_in *)to;
    int tcp = -1;
    pthread_mutex_lock(&s->mtx);
    for (int i = 0; i < s->n_conns; i++) {
        if (same_peer(&s->conns[i].peer, &dest)) tcp = s->conns[i].tcp;
    }
    if (tcp < 0 && s->listener < 0) {
        // A client's first message opens the association, as with SCTP's
        // one-to-many sockets. A client has one: its server's.
        if (s->n_conns > 0) {
            tcp = s->conns[0].tcp;
        } else {
            struct sockaddr_in remote = dest;
            remote.sin_port = htons(mapped_port(ntohs(dest.sin_port)));
            tcp = real_socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (tcp >= 0 && connect(tcp, (struct sockaddr *)&remote, sizeof remote) < 0) {
                int saved = errno;
                real_close(tcp);
                errno = saved;
                tcp = -1;
            }
            if (tcp >= 0) {
                pthread_mutex_unlock(&s->mtx);
                add_conn(s, tcp, &dest);
                start_pump(s);
                pthread_mutex_lock(&s->mtx);
            }
        }
    }
    int rc = -1;
    if (tcp >= 0) {
        trace_message("tx", msg, len);
        uint32_t be_len = htonl((uint32_t)len);
        struct iovec iov[2] = {{&be_len, 4}, {(void *)msg, len}};
        size_t total = 4 + len;
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = 2};
        ssize_t n = sendmsg(tcp, &m, MSG_NOSIGNAL);
        // Short writes happen only under pressure: finish the frame.
        if (n >= 0 && (size_t)n < total) {
            char *all = malloc(total);
            if (all) {
                memcpy(all, &be_len, 4);
                memcpy(all + 4, msg, len);
                n = write_all(tcp, all + n, total - (size_t)n) == 0 ? (ssize_t)total : -1;
                free(all);
            } else {
                n = -1;
            }
        }
        rc = n < 0 ? -1 : (int)len;
    } else if (s->listener >= 0) {
        errno = ENOTCONN;  // the RIC answering a peer that has gone
    }
    pthread_mutex_unlock(&s->mtx);
    return rc;
}

int sctp_recvmsg(int fd, void *msg, size_t len, struct sockaddr *from, socklen_t *fromlen,
                 struct sctp_sndrcvinfo *sinfo, int *msg_flags) {
    resolve();
    struct shim_socket *s = find(fd);
    if (!s) {
        errno = EBADF;
        return -1;
    }
    struct queued_header header;
    struct iovec iov[2] = {{&header, sizeof header}, {msg, len}};
    struct msghdr m = {.msg_iov = iov, .msg_iovlen = 2};
    ssize_t n;
    do {
        n = recvmsg(s->app, &m, 0);
    } while (n < 0 && errno == EINTR);
    if (n < (ssize_t)sizeof header) {
        if (n >= 0) errno = ECONNRESET;
        return -1;
    }
    if (from && fromlen) {
        socklen_t copy = *fromlen < sizeof header.from ? *fromlen : sizeof header.from;
        memcpy(from, &header.from, copy);
        *fromlen = sizeof header.from;
    }
    if (sinfo) memset(sinfo, 0, sizeof *sinfo);
    if (msg_flags) *msg_flags = header.flags | (header.flags ? 0 : MSG_EOR);
    return (int)(n - (ssize_t)sizeof header);
}
