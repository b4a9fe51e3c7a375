/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * softcm: an RDMA connection manager for hosts without RDMA hardware.
 *
 * Documentation
 * =============
 *
 * The module registers one misc character device, /dev/softcm (mode 0666).
 * Every open of it is a context of its own: the ids it creates, its event
 * queue, and the network namespace of the process that opened it, in which
 * all its ids live (as a socket lives in the namespace it was created in).
 * A context never sees another context's ids; closing the file destroys
 * every id it owns.
 *
 * The ABI version is published, as for the uverbs and rdma_cm devices, in
 * sysfs:
 *
 *     /sys/class/misc/softcm/abi_version      decimal, newline-terminated
 *
 * and userspace must refuse to run on a version it does not know.
 *
 * Commands
 * --------
 * Commands are ioctl()s on the file, SOFTCM_IOCTL_<NAME>, each carrying a
 * pointer to its struct softcm_<name>, which is read and then written back.
 * The size encoded in the ioctl number is the size of the caller's struct,
 * so structs grow at their end without a new number:
 *
 *   - a shorter struct (older userspace) is accepted down to the size the
 *     command had in its first ABI version; missing members read as zero;
 *   - a longer struct (newer userspace) is accepted when the bytes the
 *     kernel does not know are zero, and refused with E2BIG otherwise;
 *   - members marked "in" are read, "out" are written, "in/out" both;
 *     the kernel writes back at most the caller's size.
 *
 * All structs have fixed-width members, explicit padding to a multiple of
 * 8 bytes and one layout for 32- and 64-bit userspace; user pointers are
 * __aligned_u64.  Reserved members must be zero (EINVAL otherwise).  An
 * unknown command number is ENOTTY.  A failing command changes nothing.
 *
 * Ids are named by handles, small positive integers private to the file
 * that owns the id.  A handle that this file does not own is ENOENT.
 *
 *   CREATE_ID    new id in state IDLE.  ps: SOFTCM_PS_TCP (reliable
 *                connections) or SOFTCM_PS_UDP (datagrams); other values
 *                EINVAL.  EMFILE when the file already has
 *                net.softcm.max_ids_per_file ids.
 *   DESTROY_ID   destroy an id and discard its unread events.  Returns how
 *                many of its events were read, so that a library can wait
 *                until the application has acknowledged that many.
 *   BIND         bind a local address, as rdma_bind_addr(): only in IDLE
 *                (else EINVAL); AF_INET or AF_INET6 (else EAFNOSUPPORT);
 *                addr_len at least the family's sockaddr size (else
 *                EINVAL); a specific address must belong to the id's
 *                namespace (else EADDRNOTAVAIL); an IPv6 link-local address
 *                needs a scope id naming a device there (EINVAL without,
 *                ENODEV for an unknown one) and binds the id to it.  Port 0
 *                picks a free port in net.ipv4.ip_local_port_range
 *                (EADDRNOTAVAIL when none is left); a port below 1024 needs
 *                CAP_NET_BIND_SERVICE in the namespace's user namespace
 *                (EACCES).  Conflicts with ids of the same port space and
 *                port, unless both set REUSEADDR, or both set AFONLY with
 *                different families: EADDRINUSE for the same address,
 *                EADDRNOTAVAIL when either address is a wildcard.
 *   LISTEN       ADDR_BOUND -> LISTEN (from IDLE the id is first bound to
 *                0.0.0.0 and a free port).  A backlog <= 0 or above
 *                net.softcm.max_backlog means max_backlog.  EADDRINUSE if
 *                another id shares the port through REUSEADDR.  EINVAL in
 *                any other state, including LISTEN.
 *   QUERY_ADDR   the local or the peer address, with getpeername(2)
 *                semantics: addr_len is the size of the caller's buffer on
 *                input and the address's full size on output, which is
 *                larger when the address was truncated.  ENOTCONN for the
 *                peer of an id that has none.  An unbound id's local
 *                address is AF_UNSPEC, all zero.
 *   QUERY_ID     state, port space, bound device and backlog of an id.
 *   SET_OPTION   level SOFTCM_OPTION_ID: TOS (0..255, any state),
 *                REUSEADDR (0/1: in IDLE, or 1 in any state but LISTEN),
 *                AFONLY (0/1: IDLE or ADDR_BOUND), ACK_TIMEOUT (0..31,
 *                SOFTCM_PS_TCP only).  Level SOFTCM_OPTION_FILE (handle
 *                must be 0, else EINVAL) sets the file's own options:
 *                EVENT_FORMAT (SOFTCM_EVENT_FORMAT_BASIC or _FULL, see
 *                Events).  Anything else EINVAL or ENOPROTOOPT (unknown
 *                level or name).
 *   MIGRATE_ID   issued on the file the id moves to: fd and handle name it
 *                in its current file; it gets a new handle here, and its
 *                unread events move along, in order (a listener's unread
 *                CONNECT_REQUESTs, with the ids they announce).  Returns the number
 *                of its events read so far.  EBADF for an fd that is not
 *                open, EINVAL for one that is not /dev/softcm or is in
 *                another network namespace.
 *   RESOLVE_ADDR resolve a destination, as rdma_resolve_addr(): from IDLE
 *                the id is first bound (to src when given, else to the
 *                wildcard of dst's family and a free port); from
 *                ADDR_BOUND src is ignored; any other state EINVAL.  dst
 *                is AF_INET or AF_INET6 (EAFNOSUPPORT), of at least its
 *                family's size (EINVAL); src, when given, of the same
 *                family (EINVAL); a wildcard dst means the loopback
 *                address; an IPv6 link-local dst needs a scope id or an
 *                id bound to a device, and the two must agree (EINVAL).
 *                The route is looked up in the id's namespace
 *                (honouring a bound address, device and IPv6 scope id); no
 *                route fails at once (ENETUNREACH, EHOSTUNREACH, ...) and
 *                leaves the id in ADDR_BOUND, as does a route over a
 *                device whose hardware address is not a 6-byte MAC
 *                (EPROTONOSUPPORT: IPoIB, tunnels, NBMA ip6gre; the
 *                ADDR_ERROR status if the route moves to one while the
 *                id waits).  Otherwise the id is in
 *                ADDR_QUERY until an ADDR_RESOLVED event (the egress device,
 *                its MAC and MTU, the neighbour's MAC and the selected
 *                source address are then known), or an ADDR_ERROR event
 *                (status -ETIMEDOUT when the neighbour did not answer
 *                within timeout_ms, or the route's error) after which the
 *                id is back in ADDR_BOUND with its bound address.
 *                On success local and local_len are the id's local
 *                address as QUERY_ADDR would give it then (the address it
 *                is bound to, explicitly or not: its port is final, its
 *                address the wildcard of an implicit bind until the
 *                resolution picks the source).
 *   RESOLVE_ROUTE  ADDR_RESOLVED -> ROUTE_RESOLVED, with a ROUTE_RESOLVED
 *                event; the path is built locally, as rdma_cm does for
 *                RoCE.  timeout_ms must not be 0 (EINVAL); EINVAL in any
 *                other state, or when the device's MTU is below 352 bytes.
 *   QUERY_ROUTE  the resolved path: GIDs (IPv4 as v4-mapped IPv6), MACs,
 *                device, IB MTU, hop limit, traffic class, flow label.
 *                EINVAL before ROUTE_RESOLVED.
 *
 * Connections speak the InfiniBand CM over RoCEv2 (UDP port udp_port,
 * 4791 by default) as the Linux rdma_cm does.  The namespace's UDP socket
 * is opened by the first CONNECT or LISTEN; when the port is taken there
 * (by rdma_rxe in the initial namespace, say) both fail with EADDRINUSE
 * and everything that does not go on the wire keeps working.
 *
 *   CONNECT      ROUTE_RESOLVED -> CONNECT (EINVAL in any other state).
 *                SOFTCM_PS_TCP sends a REQ: private_data_len at most 56
 *                (EINVAL), qp_num's low 24 bits, responder_resources,
 *                initiator_depth, flow_control (its low bit), retry_count
 *                and rnr_retry_count (above 7 taken as 7) and srq (nonzero
 *                taken as 1) go on the wire, as rdma_cm takes them; the
 *                struct is written back unchanged.  A REP then gives
 *                CONNECT_RESPONSE (there is no QP, as for an rdma_cm id
 *                without one) and the RTU waits for ACCEPT with
 *                SOFTCM_ACCEPT_ESTABLISH (rdma_establish()).
 *                SOFTCM_CONNECT_RESPONSE is accepted and changes nothing
 *                (it asked for this before it was the only behaviour).
 *                A REJ gives REJECTED (status: the IB
 *                reason, e.g. 8 when nobody listens, 28 when the
 *                application rejected; private data: the REJ's 148
 *                bytes); no answer after the retries, UNREACHABLE
 *                (-ETIMEDOUT).  SOFTCM_PS_UDP sends a SIDR_REQ (private
 *                data at most 180 bytes) and gets ESTABLISHED with the
 *                peer's qp_num and qkey, or UNREACHABLE with the SIDR
 *                status (or -ETIMEDOUT).
 *   ACCEPT       on an id from a CONNECT_REQUEST (state CONNECT, request
 *                not yet answered, else EINVAL): sends a REP (private data
 *                at most 196 bytes) or, for SOFTCM_PS_UDP, a SIDR_REP with
 *                status 0, the given qp_num and the Q_Key 0x01234567
 *                (private data at most 136 bytes).  uid names the id in its
 *                events from now on: until an id is accepted, no event but
 *                its CONNECT_REQUEST is reported.  ESTABLISHED follows the
 *                RTU.  With SOFTCM_ACCEPT_ESTABLISH (and no parameters): on
 *                an active id that got CONNECT_RESPONSE, send the RTU.
 *                With SOFTCM_ACCEPT_QP, qp_fd and qp_handle name an RC QP
 *                (a softcm file of the same namespace, a QP handle there:
 *                EBADF, EINVAL, ENOENT otherwise) that the command first
 *                moves as librdmacm moves it before answering: INIT again,
 *                RTR, RTS, with the attributes INIT_QP_ATTR gives (the
 *                responder_resources and initiator_depth of param on a
 *                REP, the connection's on an RTU).  The message names that
 *                QP: a REP's param.qp_num must be its number (EINVAL
 *                otherwise, 0 too), its srq is sent as 0; an RTU must be
 *                for the QP number the REQ announced (EINVAL).  Every
 *                check, ACCEPT's own included, comes before the QP moves:
 *                a refused command leaves the QP as it was.  Only if a
 *                move fails, or the REP cannot be sent (ENOMEM), does
 *                the QP go to ERR, and the command fails with that error;
 *                nothing was sent.
 *   REJECT       answer a request with a REJ (reason 0 means 28, consumer
 *                defined; only 28 and 35 are allowed, else EINVAL;
 *                private data at most 148 bytes) or, for SOFTCM_PS_UDP, a
 *                SIDR_REP with status 2 (private data at most 136 bytes).
 *                EINVAL when the id has no request to answer.
 *   DISCONNECT   sends a DREQ on an established connection, or the DREP
 *                that a received DREQ awaits; DISCONNECTED follows (at once
 *                on the side that received the DREQ), then TIMEWAIT_EXIT.
 *                EINVAL on an id that never connected or accepted; 0 and
 *                nothing sent once the connection is already over.
 *   BATCH        runs count (1..SOFTCM_BATCH_MAX, else EINVAL) commands
 *                of this section (CREATE_ID to INIT_QP_ATTR; not BATCH)
 *                in one system call, in order, each exactly as its own
 *                ioctl on this file would run: op->cmd is its
 *                SOFTCM_IOCTL_* number, op->arg points to its struct,
 *                op->result receives 0 or the negative errno that ioctl
 *                would have failed with (an op that is no such command:
 *                -ENOTTY; BATCH itself: -EINVAL).  A failing op does not
 *                stop the others.  done counts the ops that ran and whose
 *                result was written; it is below count only when a fatal
 *                signal stopped the batch or an op or its result could
 *                not be accessed (then the call fails with EINTR or
 *                EFAULT if that was the first op).  A struct softcm_batch
 *                that cannot be written is EFAULT before any op runs.
 *                An op's arg must be a pointer of the kernel's width
 *                (EINVAL).  So a program can create, resolve or connect
 *                many ids per system call.
 *
 * QUERY_ADDR's peer address of a connected id is the one its connection
 * was made with (the request's source for a passive id); once the
 * connection is over (DISCONNECTED, REJECTED, UNREACHABLE) it is ENOTCONN.
 * SOFTCM_QUERY_PEER answers from address resolution (or the request) on,
 * as librdmacm fills rdma_get_peer_addr(); SOFTCM_QUERY_CONNECTED_PEER
 * answers as getpeername(2) on a TCP socket: ENOTCONN until the
 * connection is established (the RTU sent or received; for a UD id, its
 * SIDR exchange done or answered) and after it is over.
 * Destroying or closing an id ends its connection as the Linux CM does: a
 * REJ for a pending request, a DREQ for an established connection.
 *
 * Events
 * ------
 * read() returns whole struct softcm_event records, as many as fit (a
 * buffer smaller than one record is EINVAL), oldest first; it blocks while
 * there are none, unless O_NONBLOCK (EAGAIN).  poll() reports EPOLLIN while
 * events are queued.  An event whose copy to userspace faults stays queued.
 *
 * A file whose EVENT_FORMAT is SOFTCM_EVENT_FORMAT_FULL returns struct
 * softcm_event_full records instead, so that one read() tells a library
 * all it would otherwise ask in QUERY_ADDR and QUERY_ROUTE after each
 * event: the id's local and peer addresses and its route, as those
 * commands would answer at the moment the record is read (for a
 * CONNECT_REQUEST, the new id's).  flags says which are there: no
 * SOFTCM_EVENT_HAS_PEER where QUERY_ADDR(SOFTCM_QUERY_PEER) would be
 * ENOTCONN, no SOFTCM_EVENT_HAS_ROUTE where QUERY_ROUTE would fail; absent
 * parts are zero.  The format applies to every read() that starts after
 * the option is set.
 *
 * A library that reads several records at once and hands them out one by
 * one would leave poll() blind to those it still holds.  So a file offers
 * one shared page: mmap() of SOFTCM_EVENT_PAGE_SIZE bytes at offset
 * SOFTCM_MMAP_EVENT_PAGE, MAP_SHARED and not executable (else EINVAL),
 * holding struct softcm_event_page.  poll() reports EPOLLIN while events
 * are queued or the page's @held is nonzero: its user keeps @held equal to
 * the number of records it read and has not handed out yet.  MIGRATE_ID
 * wakes the destination file's pollers, so that records a library moves
 * along with an id (counted in @held before the command) are seen.  The
 * kernel only reads @held, and nothing else depends on it.
 *
 * CONNECT_REQUEST carries the listener's uid and the new id's handle: the
 * new id is in state CONNECT in the file that read the event (it has no
 * handle before: nothing can name it until it is read; the read fails with
 * EMFILE, the event staying queued, when that file is at max_ids_per_file),
 * its addresses those of the request.  Its param is the request's as the receiver sees it
 * (responder_resources and initiator_depth swapped, qp_num the peer's), with
 * 56 bytes of private data (180 for a SIDR_REQ).  Events from a REP carry
 * 196 bytes of private data, REJECTED 148, a UD ESTABLISHED 136 and the
 * peer's qp_num and qkey.  A listener's backlog bounds its unread
 * CONNECT_REQUESTs; a request beyond it is dropped without a REJ, so that
 * the peer retries, as rdma_ucm does.  A CONNECT_REQUEST still unread when
 * its listener is destroyed takes its new id with it.
 *
 * Per-network-namespace tunables live under /proc/sys/net/softcm/:
 *
 *   max_backlog        upper bound of a listener's backlog (1..65535,
 *                      default 1024).
 *   max_ids_per_file   ids one open file may hold (1..16777216, default
 *                      65536).
 *   cm_response_timeout  the CM response timeout we advertise, as an IB
 *                      time exponent (4.096 us * 2^n, 0..31, default 20 as
 *                      the Linux CM); with the path's packet life time it
 *                      makes the REQ retransmission timeout.
 *   cm_retries         CM retransmissions before giving up (0..15, default
 *                      15).
 *   packet_life_time   the path's packet life time exponent (0..31, default
 *                      18 as rdma_cm for RoCE), unless ACK_TIMEOUT is set.
 *   mra_timeout        the service timeout exponent an MRA asks for while
 *                      a request waits for the application (0..31, default
 *                      24 as rdma_cm).
 *   max_ring_bytes     the bytes of the rings of every QP and CQ of the
 *                      namespace (default 1 GiB; see Rings).
 *
 * Counters of the namespace's CM traffic (messages in and out by type,
 * retransmissions, timeouts, drops by reason) and of its live connections
 * are in /proc/net/softcm_stats, one "name value" per line.
 */
#ifndef _SOFTCM_UAPI_SOFTCM_H
#define _SOFTCM_UAPI_SOFTCM_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define SOFTCM_ABI_VERSION	3

#define SOFTCM_DEVICE_NAME	"softcm"
#define SOFTCM_ABI_VERSION_PATH	"/sys/class/misc/softcm/abi_version"

#define SOFTCM_MAX_BACKLOG_DEFAULT	1024
#define SOFTCM_MAX_BACKLOG_LIMIT	65535
#define SOFTCM_MAX_IDS_DEFAULT		65536
#define SOFTCM_MAX_IDS_LIMIT		16777216

/* Private data the CM messages carry for the application (rdma_cm's). */
#define SOFTCM_REQ_PRIVATE_DATA		56	/* REQ, after rdma_cm's header */
#define SOFTCM_REP_PRIVATE_DATA		196
#define SOFTCM_REJ_PRIVATE_DATA		148
#define SOFTCM_SIDR_REQ_PRIVATE_DATA	180	/* SIDR_REQ, after the header */
#define SOFTCM_SIDR_REP_PRIVATE_DATA	136

/* REJ reasons an application may give (IBTA's). */
#define SOFTCM_REJ_CONSUMER_DEFINED	28
#define SOFTCM_REJ_VENDOR_OPTION_NOT_SUPPORTED	35

/* The Q_Key rdma_cm gives SOFTCM_PS_UDP ids (RDMA_UDP_QKEY). */
#define SOFTCM_UDP_QKEY			0x01234567

/* Port spaces, numbered as rdma_cm's enum rdma_port_space. */
#define SOFTCM_PS_TCP		0x0106
#define SOFTCM_PS_UDP		0x0111

/* Id states, numbered as rdma_cm's enum rdma_cm_state. */
enum softcm_state {
	SOFTCM_STATE_IDLE,
	SOFTCM_STATE_ADDR_QUERY,
	SOFTCM_STATE_ADDR_RESOLVED,
	SOFTCM_STATE_ROUTE_QUERY,
	SOFTCM_STATE_ROUTE_RESOLVED,
	SOFTCM_STATE_CONNECT,
	SOFTCM_STATE_DISCONNECT,
	SOFTCM_STATE_ADDR_BOUND,
	SOFTCM_STATE_LISTEN,
	SOFTCM_STATE_DEVICE_REMOVAL,
	SOFTCM_STATE_DESTROYING,
	SOFTCM_STATE_COUNT
};

/* Event types, numbered as rdma_cm's enum rdma_cm_event_type. */
enum softcm_event_type {
	SOFTCM_EVENT_ADDR_RESOLVED,
	SOFTCM_EVENT_ADDR_ERROR,
	SOFTCM_EVENT_ROUTE_RESOLVED,
	SOFTCM_EVENT_ROUTE_ERROR,
	SOFTCM_EVENT_CONNECT_REQUEST,
	SOFTCM_EVENT_CONNECT_RESPONSE,
	SOFTCM_EVENT_CONNECT_ERROR,
	SOFTCM_EVENT_UNREACHABLE,
	SOFTCM_EVENT_REJECTED,
	SOFTCM_EVENT_ESTABLISHED,
	SOFTCM_EVENT_DISCONNECTED,
	SOFTCM_EVENT_DEVICE_REMOVAL,
	SOFTCM_EVENT_MULTICAST_JOIN,
	SOFTCM_EVENT_MULTICAST_ERROR,
	SOFTCM_EVENT_ADDR_CHANGE,
	SOFTCM_EVENT_TIMEWAIT_EXIT,
};

#define SOFTCM_ADDR_SIZE	128	/* a struct sockaddr_storage */
#define SOFTCM_PRIVATE_DATA_MAX	256

struct softcm_create_id {
	__aligned_u64	uid;		/* in: echoed in this id's events */
	__u16		ps;		/* in: SOFTCM_PS_* */
	__u16		reserved0;
	__u32		handle;		/* out */
};

struct softcm_destroy_id {
	__u32		handle;		/* in */
	__u32		events_reported;	/* out */
};

struct softcm_bind {
	__u32		handle;		/* in */
	__u32		addr_len;	/* in: bytes of addr used */
	__u8		addr[SOFTCM_ADDR_SIZE];	/* in: sockaddr_in or sockaddr_in6 */
};

struct softcm_listen {
	__u32		handle;		/* in */
	__s32		backlog;	/* in */
};

enum softcm_query_which {
	SOFTCM_QUERY_LOCAL,
	SOFTCM_QUERY_PEER,
	SOFTCM_QUERY_CONNECTED_PEER,	/* getpeername(2): established only */
};

struct softcm_query_addr {
	__u32		handle;		/* in */
	__u32		which;		/* in: enum softcm_query_which */
	__u32		addr_len;	/* in: buffer size; out: full size */
	__u32		reserved0;
	__aligned_u64	addr;		/* in: user pointer to the buffer */
};

struct softcm_query_id {
	__u32		handle;		/* in */
	__u32		state;		/* out: enum softcm_state */
	__u16		ps;		/* out */
	__u16		reserved0;
	__u32		bound_ifindex;	/* out: 0 when not bound to a device */
	__s32		backlog;	/* out: listeners only, else 0 */
	__u32		reserved1;
};

#define SOFTCM_OPTION_ID		0
#define SOFTCM_OPTION_ID_TOS		0
#define SOFTCM_OPTION_ID_REUSEADDR	1
#define SOFTCM_OPTION_ID_AFONLY		2
#define SOFTCM_OPTION_ID_ACK_TIMEOUT	3

#define SOFTCM_OPTION_FILE		1
#define SOFTCM_OPTION_FILE_EVENT_FORMAT	0

#define SOFTCM_EVENT_FORMAT_BASIC	0	/* struct softcm_event */
#define SOFTCM_EVENT_FORMAT_FULL	1	/* struct softcm_event_full */

struct softcm_set_option {
	__u32		handle;		/* in: 0 for SOFTCM_OPTION_FILE */
	__u32		level;		/* in: SOFTCM_OPTION_* */
	__u32		optname;	/* in: SOFTCM_OPTION_<level>_* */
	__u32		value;		/* in */
};

struct softcm_migrate_id {
	__s32		fd;		/* in: the file the id is in now */
	__u32		handle;		/* in: handle there; out: handle here */
	__u32		events_reported;	/* out */
	__u32		reserved0;
};

struct softcm_resolve_addr {
	__u32		handle;		/* in */
	__u32		timeout_ms;	/* in */
	__u32		src_len;	/* in: 0 for no source address */
	__u32		dst_len;	/* in */
	__u8		src[SOFTCM_ADDR_SIZE];	/* in */
	__u8		dst[SOFTCM_ADDR_SIZE];	/* in */
	__u32		local_len;	/* out */
	__u32		reserved0;
	__u8		local[SOFTCM_ADDR_SIZE];	/* out: the id's local address */
};

struct softcm_resolve_route {
	__u32		handle;		/* in */
	__u32		timeout_ms;	/* in */
};

/* The IB MTU enum, as IBTA and enum ib_mtu: 1 = 256 ... 5 = 4096. */
struct softcm_query_route {
	__u32		handle;		/* in */
	__u32		ifindex;	/* out: egress device */
	__u8		sgid[16];	/* out */
	__u8		dgid[16];	/* out */
	__u8		smac[6];	/* out */
	__u8		dmac[6];	/* out: the neighbour's (the gateway's) */
	__u32		flow_label;	/* out */
	__u16		pkey;		/* out */
	__u8		mtu;		/* out: IB MTU enum */
	__u8		hop_limit;	/* out */
	__u8		traffic_class;	/* out */
	__u8		sl;		/* out */
	__u8		packet_life_time;	/* out */
	__u8		gateway;	/* out: 1 when the route has a gateway */
	__u32		reserved0;
	__u32		reserved1;
};

/* Connection parameters, as carried by events and commands. */
struct softcm_conn_param {
	__u32		qp_num;
	__u32		qkey;
	__u8		private_data_len;
	__u8		responder_resources;
	__u8		initiator_depth;
	__u8		flow_control;
	__u8		retry_count;
	__u8		rnr_retry_count;
	__u8		srq;
	__u8		reserved0;
	__u8		private_data[SOFTCM_PRIVATE_DATA_MAX];
};

#define SOFTCM_CONNECT_RESPONSE	0x1U	/* no effect: CONNECT_RESPONSE always */

struct softcm_connect {
	__u32		handle;		/* in */
	__u32		flags;		/* in: SOFTCM_CONNECT_* */
	struct softcm_conn_param param;	/* in */
};

#define SOFTCM_ACCEPT_ESTABLISH	0x1U	/* rdma_establish(): send the RTU */
#define SOFTCM_ACCEPT_QP	0x2U	/* move qp_fd's qp_handle to RTS first */

struct softcm_accept {
	__aligned_u64	uid;		/* in: the id's uid from now on */
	__u32		handle;		/* in */
	__u32		flags;		/* in: SOFTCM_ACCEPT_* */
	struct softcm_conn_param param;	/* in; unused with ACCEPT_ESTABLISH */
	__s32		qp_fd;		/* in: with SOFTCM_ACCEPT_QP */
	__u32		qp_handle;	/* in: with SOFTCM_ACCEPT_QP */
};

struct softcm_reject {
	__u32		handle;		/* in */
	__u8		reason;		/* in: 0 (28), 28 or 35 */
	__u8		private_data_len;	/* in */
	__u16		reserved0;
	__u8		private_data[SOFTCM_PRIVATE_DATA_MAX];	/* in */
};

struct softcm_disconnect {
	__u32		handle;		/* in */
	__u32		reserved0;
};

/* One record of read(). */
struct softcm_event {
	__aligned_u64	uid;		/* of the id; CONNECT_REQUEST: the listener's */
	__u32		handle;		/* the id; CONNECT_REQUEST: the new id */
	__u32		event;		/* enum softcm_event_type */
	__s32		status;		/* 0, -errno, or a positive IB reason */
	__u32		reserved0;
	struct softcm_conn_param param;
};

#define SOFTCM_EVENT_HAS_LOCAL	0x1U
#define SOFTCM_EVENT_HAS_PEER	0x2U
#define SOFTCM_EVENT_HAS_ROUTE	0x4U

/* One record of read() in SOFTCM_EVENT_FORMAT_FULL. */
struct softcm_event_full {
	struct softcm_event ev;
	__u32		flags;		/* SOFTCM_EVENT_HAS_* */
	__u32		local_len;	/* as QUERY_ADDR's addr_len */
	__u32		peer_len;
	__u32		reserved0;
	__u8		local[SOFTCM_ADDR_SIZE];	/* SOFTCM_QUERY_LOCAL */
	__u8		peer[SOFTCM_ADDR_SIZE];		/* SOFTCM_QUERY_PEER */
	struct softcm_query_route route;	/* route.handle is ev.handle */
};

#define SOFTCM_MMAP_EVENT_PAGE	0
#define SOFTCM_EVENT_PAGE_SIZE	4096

/* The page mmap() shares at SOFTCM_MMAP_EVENT_PAGE; the rest of it is zero. */
struct softcm_event_page {
	__u32		held;		/* written by userspace */
	__u32		reserved0;
};

#define SOFTCM_BATCH_MAX	1024

struct softcm_batch_op {
	__u32		cmd;		/* in: SOFTCM_IOCTL_* */
	__s32		result;		/* out: 0 or -errno */
	__aligned_u64	arg;		/* in: user pointer to its struct */
};

struct softcm_batch {
	__u32		count;		/* in */
	__u32		done;		/* out */
	__aligned_u64	ops;		/* in: user pointer to count ops */
};

/*
 * Verbs
 * =====
 *
 * Each network namespace has one verbs device, "softcm0" as rdma_get_devices()
 * and ibv_get_device_list() name it, with one RoCEv2 port (number 1).  Its
 * GID table holds one entry per IPv4 address (v4-mapped) and IPv6 address
 * of the namespace, kept current as addresses come and go (as rdma_rxe
 * builds its table from its netdev's addresses); an entry's index is stable
 * while its address exists.
 *
 * Any open of /dev/softcm is also a verbs context: the objects below belong
 * to the file that created them, are named by handles private to it (a
 * handle of another type, another file or a destroyed object is ENOENT) and
 * are destroyed when it is closed.  Field meanings are those of
 * <rdma/ib_user_verbs.h> and <infiniband/verbs.h>; constants (QP types and
 * states, attribute mask bits, access flags, work completion status and
 * opcodes, async event types) are libibverbs' values.
 *
 *   QUERY_DEVICE   the device's attributes (struct softcm_device_attr).
 *   QUERY_PORT     port 1's attributes (EINVAL for any other port).
 *   QUERY_GID      one GID table entry; an empty entry is all zero with
 *                  gid_type SOFTCM_GID_TYPE_NONE; index beyond the table
 *                  EINVAL.
 *   ALLOC_PD / DEALLOC_PD   protection domains.  DEALLOC_PD of a PD that an
 *                  MR, QP or AH still uses is EBUSY.
 *   REG_MR / DEREG_MR   pin [addr, addr + length) long-term, charged to
 *                  the caller's user within its RLIMIT_MEMLOCK (ENOMEM
 *                  beyond it, unless CAP_IPC_LOCK), whichever process of
 *                  it registers on the file; DEREG_MR returns once the
 *                  pages are unpinned and uncharged;
 *                  access: IBV_ACCESS_LOCAL_WRITE, REMOTE_WRITE and
 *                  REMOTE_ATOMIC (both need LOCAL_WRITE), REMOTE_READ;
 *                  MW_BIND, ZERO_BASED, ON_DEMAND EOPNOTSUPP; HUGETLB and the
 *                  optional range (bits 20-29, RELAXED_ORDERING among
 *                  them) accepted and ignored, as uverbs; other bits
 *                  EINVAL.
 *                  lkey and rkey are random and unique in the namespace.
 *   CREATE_COMP_CHANNEL  a new file descriptor (O_CLOEXEC) from which
 *                  read() returns struct softcm_comp_event records for the
 *                  CQs attached to it; poll() and O_NONBLOCK as for events.
 *   CREATE_ASYNC_FD  the context's async event descriptor (one per file,
 *                  EEXIST for a second, even once the first is closed):
 *                  struct softcm_async_event records (CQ overflow:
 *                  IBV_EVENT_CQ_ERR; QP errors).  Once the /dev/softcm
 *                  file it belongs to is closed, read() returns what is
 *                  queued, then EIO.
 *   CREATE_CQ / DESTROY_CQ   completion queues of at least cqe entries
 *                  (1..max_cqe, else EINVAL), attached to a completion
 *                  channel (channel_fd, or -1).  A completion that finds
 *                  the CQ full is lost and IBV_EVENT_CQ_ERR is reported.
 *                  DESTROY_CQ of a CQ that a QP uses is EBUSY; it returns
 *                  how many completion and async events were reported.
 *   REQ_NOTIFY_CQ  arm the CQ: the next completion (the next solicited one
 *                  with solicited_only) queues one event on its channel.
 *   POLL_CQ        up to ne completions into the caller's array.
 *   CREATE_QP / MODIFY_QP / QUERY_QP / DESTROY_QP   queue pairs of type
 *                  IBV_QPT_RC or IBV_QPT_UD (others EOPNOTSUPP), without
 *                  SRQ (EOPNOTSUPP).  QP numbers are 24 bits, unique in the
 *                  namespace, never 0 or 1.  MODIFY_QP follows the IBTA
 *                  modify-QP table: a transition not allowed, a required
 *                  attribute missing or one not allowed in the mask is
 *                  EINVAL; alternate paths and SQD EOPNOTSUPP.
 *                  DESTROY_QP returns how many async events were reported.
 *   POST_SEND / POST_RECV  validate and queue work requests.  On an error
 *                  the first bad one's index is in bad_wr, those before it
 *                  are queued.  An RC QP's SENDs, RDMA WRITEs, RDMA
 *                  READs and atomics go to the data path (see Rings for
 *                  how they complete); atomics (ABI 3) take one SGE of
 *                  exactly 8 bytes, not inline (else EINVAL), where the
 *                  original value lands.  A SEND_WITH_INV goes on the
 *                  wire with its IETH (a softcm responder has no rkey
 *                  to invalidate: the WR completes with
 *                  IBV_WC_REM_INV_REQ_ERR, the receive it took too).
 *                  LOCAL_INV, BIND_MW and TSO are EOPNOTSUPP on RC, and
 *                  every opcode but SEND and SEND_WITH_IMM is EINVAL on UD.
 *   CREATE_AH / DESTROY_AH   address handles for UD sends.
 *   DOORBELL       run the QP's send queue and/or flush its receive
 *                  queue (see Rings below); flags 0 or unknown EINVAL.
 *
 * Not supported, EOPNOTSUPP: SRQ, XRC, memory windows, on-demand
 * paging, alternate paths, raw packet QPs.
 *
 * The CM side, on an id:
 *
 *   INIT_QP_ATTR   the attributes and mask (IBV_QP_*) that move the id's
 *                  QP to qp_state (IBV_QPS_INIT, RTR or RTS; any other
 *                  EINVAL), as rdma_init_qp_attr() over the Linux CM:
 *                  INIT: port 1, P_Key index 0 and access flags (none
 *                  before a connection; REMOTE_WRITE, and REMOTE_READ
 *                  and REMOTE_ATOMIC (ABI 3) when our responder
 *                  resources are not 0, once a REQ is
 *                  sent or received); for SOFTCM_PS_UDP the Q_Key
 *                  SOFTCM_UDP_QKEY instead of access flags.  RTR: the
 *                  path (ah_attr: the peer's GID, our source address's
 *                  GID table index, hop limit, traffic class, flow label,
 *                  is_global 1), the path MTU, the peer's QP number,
 *                  rq_psn our own starting PSN (the one our REQ or REP
 *                  announced, as rdma_cm's), max_dest_rd_atomic our
 *                  responder resources, min_rnr_timer 0.  RTS: sq_psn
 *                  the peer's starting PSN (the one its REP or REQ
 *                  announced), the local ACK timeout (the CM's, or
 *                  ACK_TIMEOUT's when set), retry_cnt, rnr_retry and
 *                  max_rd_atomic our initiator depth.  So each side's
 *                  rq_psn is the other's sq_psn, as with the Linux CM.
 *                  A UD id's RTR is the state alone, its RTS the state
 *                  and sq_psn 0 (what librdmacm applies).  EINVAL
 *                  without a device (an unbound id, or one bound to a
 *                  wildcard address, as rdma_ucm), and before the id has
 *                  what the state needs (RTR and RTS: a received REQ or
 *                  REP; an RC id's connection over: any state).
 *                  EADDRNOTAVAIL for RTR when the source address the
 *                  connection was made from has left the GID table.
 */

#define SOFTCM_PORT_NUM			1
#define SOFTCM_GID_TABLE_LEN		128
#define SOFTCM_VENDOR_ERR_NO_DATA_PATH	0x50f7c001

enum softcm_gid_type {
	SOFTCM_GID_TYPE_NONE,
	SOFTCM_GID_TYPE_ROCE_V2,
};

struct softcm_device_attr {
	__aligned_u64	fw_ver;
	__aligned_u64	node_guid;	/* big endian, as ibv_device_attr */
	__aligned_u64	sys_image_guid;	/* big endian */
	__aligned_u64	max_mr_size;
	__aligned_u64	page_size_cap;
	__aligned_u64	device_cap_flags;	/* IBV_DEVICE_* */
	__u32		vendor_id;
	__u32		vendor_part_id;
	__u32		hw_ver;
	__u32		max_qp;
	__u32		max_qp_wr;
	__u32		max_sge;
	__u32		max_cq;
	__u32		max_cqe;
	__u32		max_mr;
	__u32		max_pd;
	__u32		max_qp_rd_atom;
	__u32		max_qp_init_rd_atom;
	__u32		max_ah;
	__u32		max_inline_data;
	__u16		max_pkeys;
	__u8		local_ca_ack_delay;
	__u8		phys_port_cnt;
	__u32		reserved0;
};

struct softcm_query_device {
	struct softcm_device_attr attr;	/* out */
};

struct softcm_port_attr {
	__u32		port_cap_flags;	/* IBV_PORT_* */
	__u32		max_msg_sz;
	__u32		gid_tbl_len;
	__u32		pkey_tbl_len;
	__u8		state;		/* enum ibv_port_state */
	__u8		max_mtu;	/* enum ibv_mtu */
	__u8		active_mtu;
	__u8		phys_state;
	__u8		active_width;
	__u8		active_speed;
	__u8		link_layer;	/* IBV_LINK_LAYER_ETHERNET */
	__u8		reserved0;
	__u32		reserved1;
	__u32		reserved2;
};

struct softcm_query_port {
	__u8		port_num;	/* in */
	__u8		reserved0[7];
	struct softcm_port_attr attr;	/* out */
};

struct softcm_query_gid {
	__u8		port_num;	/* in */
	__u8		reserved0[3];
	__u32		index;		/* in */
	__u8		gid[16];	/* out */
	__u32		gid_type;	/* out: enum softcm_gid_type */
	__u32		ifindex;	/* out: the address's device */
};

struct softcm_alloc_pd {
	__u32		handle;		/* out */
	__u32		reserved0;
};

/* DEALLOC_PD, DEREG_MR, DESTROY_AH: an object by handle. */
struct softcm_destroy_obj {
	__u32		handle;		/* in */
	__u32		reserved0;
};

struct softcm_reg_mr {
	__aligned_u64	addr;		/* in: start of the user buffer */
	__aligned_u64	length;		/* in */
	__aligned_u64	iova;		/* in: the address peers use */
	__u32		pd_handle;	/* in */
	__u32		access;		/* in: IBV_ACCESS_* */
	__u32		handle;		/* out */
	__u32		lkey;		/* out */
	__u32		rkey;		/* out */
	__u32		reserved0;
};

struct softcm_create_comp_channel {
	__s32		fd;		/* out */
	__u32		reserved0;
};

struct softcm_create_async_fd {
	__s32		fd;		/* out */
	__u32		reserved0;
};

/* One record of read() on a completion channel. */
struct softcm_comp_event {
	__aligned_u64	cq_uid;		/* the CQ's uid */
	__u32		cq_handle;
	__u32		reserved0;
};

/* One record of read() on the async event descriptor. */
struct softcm_async_event {
	__aligned_u64	uid;		/* the CQ's or QP's uid; 0 for the port */
	__u32		event_type;	/* enum ibv_event_type */
	__u32		handle;		/* the CQ or QP; 0 for the port */
};

/*
 * One area of a verbs object that mmap() shares (MAP_SHARED, never
 * executable): size bytes at offset.  Offsets are the file's, valid from
 * the create command until the object is destroyed; a mapping lives on
 * after that, holding its own reference on the memory.
 */
struct softcm_ring_map {
	__aligned_u64	offset;		/* out: mmap() offset */
	__u32		size;		/* out: bytes, a multiple of the page size */
	__u32		reserved0;
};

/*
 * A ring: entries slots of stride bytes (both powers of two) at offset
 * bytes into its area.  Indices are free-running __u32s, masked with
 * entries - 1 on use; the slots of a ring are those between its
 * consumer index and its producer index.
 */
struct softcm_ring_info {
	__u32		offset;		/* out: bytes from the area's start */
	__u32		entries;	/* out */
	__u32		stride;		/* out */
	__u32		reserved0;
};

struct softcm_create_cq {
	__aligned_u64	uid;		/* in: echoed in its events */
	__u32		cqe;		/* in: at least; out: actual */
	__u32		comp_vector;	/* in: 0 */
	__s32		channel_fd;	/* in: completion channel, or -1 */
	__u32		handle;		/* out */
	/* ABI 2: the rings (see "Rings") */
	struct softcm_ring_map kmap;	/* out: read-only: struct softcm_cq_kpage */
	struct softcm_ring_map umap;	/* out: read-write: struct softcm_cq_upage */
	struct softcm_ring_info ring;	/* out: the CQEs, in kmap */
};

struct softcm_destroy_cq {
	__u32		handle;		/* in */
	__u32		comp_events_reported;	/* out */
	__u32		async_events_reported;	/* out */
	__u32		reserved0;
};

struct softcm_req_notify_cq {
	__u32		handle;		/* in */
	__u32		solicited_only;	/* in: 0 or 1 */
};

/* A work completion, as struct ib_uverbs_wc. */
struct softcm_wc {
	__aligned_u64	wr_id;
	__u32		status;		/* enum ibv_wc_status */
	__u32		opcode;		/* enum ibv_wc_opcode */
	__u32		vendor_err;
	__u32		byte_len;
	__u32		imm_data;	/* network order, as ibv_wc */
	__u32		qp_num;
	__u32		src_qp;
	__u32		wc_flags;	/* IBV_WC_* flags */
	__u16		pkey_index;
	__u16		slid;
	__u8		sl;
	__u8		dlid_path_bits;
	__u8		port_num;
	__u8		reserved0;
};

struct softcm_poll_cq {
	__aligned_u64	wc;		/* in: user pointer to ne struct softcm_wc */
	__u32		handle;		/* in */
	__u32		ne;		/* in: room; out: completions written */
};

/* An address vector, as struct ib_uverbs_ah_attr for RoCE. */
struct softcm_ah_attr {
	__u8		dgid[16];
	__u32		flow_label;
	__u16		dlid;
	__u8		sgid_index;
	__u8		hop_limit;
	__u8		traffic_class;
	__u8		sl;
	__u8		src_path_bits;
	__u8		static_rate;
	__u8		is_global;	/* must be 1: RoCE has no LIDs */
	__u8		port_num;
	__u16		reserved0;
};

struct softcm_qp_cap {
	__u32		max_send_wr;
	__u32		max_recv_wr;
	__u32		max_send_sge;
	__u32		max_recv_sge;
	__u32		max_inline_data;
	__u32		reserved0;
};

/* QP attributes, as struct ibv_qp_attr; valid members per attr_mask. */
struct softcm_qp_attr {
	__u32		qp_state;	/* enum ibv_qp_state */
	__u32		cur_qp_state;
	__u32		path_mtu;	/* enum ibv_mtu */
	__u32		path_mig_state;
	__u32		qkey;
	__u32		rq_psn;
	__u32		sq_psn;
	__u32		dest_qp_num;
	__u32		qp_access_flags;
	__u16		pkey_index;
	__u16		alt_pkey_index;
	__u8		en_sqd_async_notify;
	__u8		sq_draining;
	__u8		max_rd_atomic;
	__u8		max_dest_rd_atomic;
	__u8		min_rnr_timer;
	__u8		port_num;
	__u8		timeout;
	__u8		retry_cnt;
	__u8		rnr_retry;
	__u8		alt_port_num;
	__u8		alt_timeout;
	__u8		reserved0;
	struct softcm_qp_cap cap;
	struct softcm_ah_attr ah_attr;
	struct softcm_ah_attr alt_ah_attr;
	__u32		reserved1;
};

struct softcm_create_qp {
	__aligned_u64	uid;		/* in: echoed in its async events */
	__u32		pd_handle;	/* in */
	__u32		send_cq_handle;	/* in */
	__u32		recv_cq_handle;	/* in */
	__u32		srq_handle;	/* in: must be 0 */
	__u8		qp_type;	/* in: IBV_QPT_RC or IBV_QPT_UD */
	__u8		sq_sig_all;	/* in: 0 or 1 */
	__u16		reserved0;
	__u32		handle;		/* out */
	struct softcm_qp_cap cap;	/* in: requested; out: actual */
	__u32		qp_num;		/* out */
	__u32		reserved1;
	/* ABI 2: the rings (see "Rings") */
	struct softcm_ring_map kmap;	/* out: read-only: struct softcm_qp_kpage */
	struct softcm_ring_map umap;	/* out: read-write: struct softcm_qp_upage */
	struct softcm_ring_info sq;	/* out: the send queue, in umap */
	struct softcm_ring_info rq;	/* out: the receive queue, in umap */
};

struct softcm_modify_qp {
	__u32		handle;		/* in */
	__u32		attr_mask;	/* in: IBV_QP_* */
	struct softcm_qp_attr attr;	/* in */
};

struct softcm_query_qp {
	__u32		handle;		/* in */
	__u32		attr_mask;	/* in: what the caller wants (all is given) */
	struct softcm_qp_attr attr;	/* out */
	struct softcm_qp_cap init_cap;	/* out: as created */
	__u8		qp_type;	/* out */
	__u8		sq_sig_all;	/* out */
	__u16		reserved0;
	__u32		reserved1;
};

struct softcm_destroy_qp {
	__u32		handle;		/* in */
	__u32		events_reported;	/* out */
};

struct softcm_sge {
	__aligned_u64	addr;
	__u32		length;
	__u32		lkey;
};

/* A send work request; its num_sge entries follow the previous WR's. */
struct softcm_send_wr {
	__aligned_u64	wr_id;
	__u32		num_sge;
	__u32		opcode;		/* enum ibv_wr_opcode */
	__u32		send_flags;	/* IBV_SEND_* */
	/* network order; SEND_WITH_INV: the rkey to invalidate, host order */
	__u32		imm_data;
	union {
		struct {
			__aligned_u64	remote_addr;
			__u32		rkey;
			__u32		reserved0;
		} rdma;
		/* ABI 3: IBV_WR_ATOMIC_CMP_AND_SWP and _FETCH_AND_ADD */
		struct {
			__aligned_u64	remote_addr;	/* 8-byte aligned */
			__aligned_u64	compare_add;	/* compare, or add */
			__aligned_u64	swap;
			__u32		rkey;
			__u32		reserved0;
		} atomic;
		struct {
			__u32		ah_handle;
			__u32		remote_qpn;
			__u32		remote_qkey;
			__u32		reserved0;
		} ud;
	} wr;
};

struct softcm_recv_wr {
	__aligned_u64	wr_id;
	__u32		num_sge;
	__u32		reserved0;
};

/*
 * POST_SEND and POST_RECV: wr_count WRs and sge_count SGEs (the sum of
 * their num_sge) in two arrays.  Bounded by the QP's capacities.
 */
struct softcm_post {
	__aligned_u64	wr;		/* in: user pointer to the WR array */
	__aligned_u64	sge;		/* in: user pointer to the SGE array */
	__u32		handle;		/* in: the QP */
	__u32		wr_count;	/* in */
	__u32		sge_count;	/* in */
	__u32		bad_wr;		/* out: index of the first WR not queued */
};

/*
 * Rings (ABI 2)
 * -----
 * Each QP's send and receive queue and each CQ is a ring in memory the
 * library maps (CREATE_QP and CREATE_CQ return where).  Every object has
 * two areas: kmap, which only the kernel writes and which maps read-only
 * (a writable or executable mapping is EINVAL, and mprotect() cannot add
 * PROT_WRITE: EACCES), and umap, which the library writes.  Each index
 * has one writer:
 *
 *   area   struct / ring        writer   contents
 *   QP k   softcm_qp_kpage      kernel   sq_cons, rq_cons, state, sq_flags
 *   QP u   softcm_qp_upage      library  sq_prod, rq_prod
 *   QP u   sq ring              library  struct softcm_sq_wqe, then its
 *                                        SGEs or inline bytes
 *   QP u   rq ring              library  struct softcm_rq_wqe, then SGEs
 *   CQ k   softcm_cq_kpage      kernel   prod
 *   CQ k   ring                 kernel   struct softcm_wc, one per slot
 *   CQ u   softcm_cq_upage      library  cons
 *
 * A producer writes its slot, then its index with release semantics; a
 * consumer reads the index with acquire semantics, then the slot, and
 * publishes its own index (release) once done with the slot.  The
 * kernel copies a work request out of its slot once, checks the copy and
 * never reads the slot again; it keeps its own indices in its own memory
 * and only mirrors them into kmap, and reads a user index as a count
 * bounded by the ring (a queue whose producer is more than entries ahead
 * of its consumer, or behind the WRs the kernel already took, is broken:
 * the QP goes to ERR).  What a program writes
 * into its own rings can only fail its own QPs and CQs.
 *
 * Send queue: at most cap.max_send_wr WRs between sq_cons and sq_prod.
 * The kernel takes WRs while it runs; when it goes idle it sets
 * SOFTCM_SQ_NEED_DOORBELL in sq_flags, issues a full barrier and reads
 * sq_prod once more.  The library publishes sq_prod, issues a full
 * barrier and reads sq_flags: only if the flag is set does it call
 * DOORBELL (SOFTCM_DOORBELL_SQ).  Either the kernel sees the new WR or
 * the library sees the flag, so no doorbell is lost and WRs posted while
 * the kernel runs need none.  WRs wait while the QP is not in RTS or ERR.
 * An RC QP's SENDs and RDMA WRITEs complete when the peer acknowledges
 * them, its RDMA READs when their responses all came, its atomics
 * (IBV_WC_COMP_SWAP, IBV_WC_FETCH_ADD, byte_len 8) when their ATOMIC
 * ACKNOWLEDGE came and its original value is in their SGE; each holds its
 * slot until then.  An RDMA READ or atomic on a QP whose max_rd_atomic
 * is 0 completes at once with IBV_WC_LOC_QP_OP_ERR.  A UD QP's sends
 * complete at once with IBV_WC_GENERAL_ERR (vendor_err
 * SOFTCM_VENDOR_ERR_NO_DATA_PATH) and take the QP to ERR; in ERR sends
 * complete with IBV_WC_WR_FLUSH_ERR; a WR that fails the kernel's checks
 * completes with IBV_WC_LOC_QP_OP_ERR and takes the QP to ERR.
 *
 * Receive queue: at most cap.max_recv_wr WRs between rq_cons and
 * rq_prod, no system call.  An RC QP's receive at rq_cons completes
 * when a SEND (or a WRITE with immediate) from the peer is complete in
 * it; a UD QP's only by flush.  When the QP enters ERR, every posted
 * one completes with IBV_WC_WR_FLUSH_ERR;
 * the kernel writes state before it reads rq_prod (a full barrier
 * between), so a library that posts, issues a full barrier and finds
 * state ERR calls DOORBELL (SOFTCM_DOORBELL_RQ) to flush what it posted.
 * RESET discards what either queue holds: the kernel's indices become
 * the library's.
 *
 * CQ: the kernel writes a completion at prod and advances it; the
 * library reads between its cons and prod and advances cons.  The CQ is
 * full when prod - cons equals cqe: the completion that finds it full is
 * lost and the CQ is in error (IBV_EVENT_CQ_ERR).  REQ_NOTIFY_CQ arms it
 * as before, and a completion event goes to the channel as before.
 *
 * POST_SEND, POST_RECV and POLL_CQ still work: they write and read the
 * same rings (POST_SEND runs the send queue as a doorbell would).
 *
 * Ring memory is charged to the memory cgroup of the creator and counted
 * against the namespace's net.softcm.max_ring_bytes (ENOMEM beyond it).
 */
#define SOFTCM_SQ_NEED_DOORBELL	0x1U

struct softcm_qp_kpage {
	__u32		sq_cons;	/* WRs the kernel took from the SQ */
	__u32		sq_flags;	/* SOFTCM_SQ_* */
	__u32		state;		/* enum ibv_qp_state, as MODIFY_QP left it */
	__u32		reserved0[13];
	__u32		rq_cons;	/* WRs the kernel took from the RQ */
	__u32		reserved1[15];
};

struct softcm_qp_upage {
	__u32		sq_prod;
	__u32		reserved0[15];
	__u32		rq_prod;
	__u32		reserved1[15];
};

struct softcm_cq_kpage {
	__u32		prod;
	__u32		reserved0[15];
};

struct softcm_cq_upage {
	__u32		cons;
	__u32		reserved0[15];
};

/*
 * A send queue slot: the WR (its wr.num_sge SGEs follow), or with
 * IBV_SEND_INLINE its inline_len bytes of data (wr.num_sge ignored).
 */
struct softcm_sq_wqe {
	struct softcm_send_wr wr;
	__u32		inline_len;
	__u32		reserved0;
};

/* A receive queue slot: the WR, then its wr.num_sge SGEs. */
struct softcm_rq_wqe {
	struct softcm_recv_wr wr;
};

#define SOFTCM_DOORBELL_SQ	0x1U	/* run the send queue */
#define SOFTCM_DOORBELL_RQ	0x2U	/* flush the receive queue if in ERR */

struct softcm_doorbell {
	__u32		handle;		/* in: the QP */
	__u32		flags;		/* in: SOFTCM_DOORBELL_* */
};

struct softcm_create_ah {
	__u32		pd_handle;	/* in */
	__u32		handle;		/* out */
	struct softcm_ah_attr attr;	/* in */
};

struct softcm_init_qp_attr {
	__u32		handle;		/* in: the id */
	__u32		qp_state;	/* in: IBV_QPS_INIT, RTR or RTS */
	__u32		attr_mask;	/* out */
	__u32		reserved0;
	struct softcm_qp_attr attr;	/* out */
};

#define SOFTCM_IOCTL_TYPE	0xC5
#define _SOFTCM_IOWR(cmd, type) _IOWR(SOFTCM_IOCTL_TYPE, SOFTCM_CMD_##cmd, struct type)

enum softcm_cmd {
	SOFTCM_CMD_CREATE_ID,
	SOFTCM_CMD_DESTROY_ID,
	SOFTCM_CMD_BIND,
	SOFTCM_CMD_LISTEN,
	SOFTCM_CMD_QUERY_ADDR,
	SOFTCM_CMD_QUERY_ID,
	SOFTCM_CMD_SET_OPTION,
	SOFTCM_CMD_MIGRATE_ID,
	SOFTCM_CMD_RESOLVE_ADDR,
	SOFTCM_CMD_RESOLVE_ROUTE,
	SOFTCM_CMD_QUERY_ROUTE,
	SOFTCM_CMD_CONNECT,
	SOFTCM_CMD_ACCEPT,
	SOFTCM_CMD_REJECT,
	SOFTCM_CMD_DISCONNECT,
	SOFTCM_CMD_INIT_QP_ATTR,
	SOFTCM_CMD_BATCH,
	SOFTCM_CMD_COUNT
};

/* The verbs commands have numbers of their own, from 0x40. */
enum softcm_vcmd {
	SOFTCM_VCMD_BASE = 0x40,
	SOFTCM_VCMD_QUERY_DEVICE = SOFTCM_VCMD_BASE,
	SOFTCM_VCMD_QUERY_PORT,
	SOFTCM_VCMD_QUERY_GID,
	SOFTCM_VCMD_ALLOC_PD,
	SOFTCM_VCMD_DEALLOC_PD,
	SOFTCM_VCMD_REG_MR,
	SOFTCM_VCMD_DEREG_MR,
	SOFTCM_VCMD_CREATE_COMP_CHANNEL,
	SOFTCM_VCMD_CREATE_ASYNC_FD,
	SOFTCM_VCMD_CREATE_CQ,
	SOFTCM_VCMD_DESTROY_CQ,
	SOFTCM_VCMD_REQ_NOTIFY_CQ,
	SOFTCM_VCMD_POLL_CQ,
	SOFTCM_VCMD_CREATE_QP,
	SOFTCM_VCMD_MODIFY_QP,
	SOFTCM_VCMD_QUERY_QP,
	SOFTCM_VCMD_DESTROY_QP,
	SOFTCM_VCMD_POST_SEND,
	SOFTCM_VCMD_POST_RECV,
	SOFTCM_VCMD_CREATE_AH,
	SOFTCM_VCMD_DESTROY_AH,
	SOFTCM_VCMD_DOORBELL,
	SOFTCM_VCMD_END
};

#define SOFTCM_IOCTL_CREATE_ID	_SOFTCM_IOWR(CREATE_ID, softcm_create_id)
#define SOFTCM_IOCTL_DESTROY_ID	_SOFTCM_IOWR(DESTROY_ID, softcm_destroy_id)
#define SOFTCM_IOCTL_BIND	_SOFTCM_IOWR(BIND, softcm_bind)
#define SOFTCM_IOCTL_LISTEN	_SOFTCM_IOWR(LISTEN, softcm_listen)
#define SOFTCM_IOCTL_QUERY_ADDR	_SOFTCM_IOWR(QUERY_ADDR, softcm_query_addr)
#define SOFTCM_IOCTL_QUERY_ID	_SOFTCM_IOWR(QUERY_ID, softcm_query_id)
#define SOFTCM_IOCTL_SET_OPTION	_SOFTCM_IOWR(SET_OPTION, softcm_set_option)
#define SOFTCM_IOCTL_MIGRATE_ID	_SOFTCM_IOWR(MIGRATE_ID, softcm_migrate_id)
#define SOFTCM_IOCTL_RESOLVE_ADDR	_SOFTCM_IOWR(RESOLVE_ADDR, softcm_resolve_addr)
#define SOFTCM_IOCTL_RESOLVE_ROUTE	_SOFTCM_IOWR(RESOLVE_ROUTE, softcm_resolve_route)
#define SOFTCM_IOCTL_QUERY_ROUTE	_SOFTCM_IOWR(QUERY_ROUTE, softcm_query_route)
#define SOFTCM_IOCTL_CONNECT	_SOFTCM_IOWR(CONNECT, softcm_connect)
#define SOFTCM_IOCTL_ACCEPT	_SOFTCM_IOWR(ACCEPT, softcm_accept)
#define SOFTCM_IOCTL_REJECT	_SOFTCM_IOWR(REJECT, softcm_reject)
#define SOFTCM_IOCTL_DISCONNECT	_SOFTCM_IOWR(DISCONNECT, softcm_disconnect)
#define SOFTCM_IOCTL_INIT_QP_ATTR	_SOFTCM_IOWR(INIT_QP_ATTR, softcm_init_qp_attr)
#define SOFTCM_IOCTL_BATCH	_SOFTCM_IOWR(BATCH, softcm_batch)

#define _SOFTCM_VIOWR(cmd, type) _IOWR(SOFTCM_IOCTL_TYPE, SOFTCM_VCMD_##cmd, struct type)
#define SOFTCM_IOCTL_QUERY_DEVICE	_SOFTCM_VIOWR(QUERY_DEVICE, softcm_query_device)
#define SOFTCM_IOCTL_QUERY_PORT		_SOFTCM_VIOWR(QUERY_PORT, softcm_query_port)
#define SOFTCM_IOCTL_QUERY_GID		_SOFTCM_VIOWR(QUERY_GID, softcm_query_gid)
#define SOFTCM_IOCTL_ALLOC_PD		_SOFTCM_VIOWR(ALLOC_PD, softcm_alloc_pd)
#define SOFTCM_IOCTL_DEALLOC_PD		_SOFTCM_VIOWR(DEALLOC_PD, softcm_destroy_obj)
#define SOFTCM_IOCTL_REG_MR		_SOFTCM_VIOWR(REG_MR, softcm_reg_mr)
#define SOFTCM_IOCTL_DEREG_MR		_SOFTCM_VIOWR(DEREG_MR, softcm_destroy_obj)
#define SOFTCM_IOCTL_CREATE_COMP_CHANNEL \
	_SOFTCM_VIOWR(CREATE_COMP_CHANNEL, softcm_create_comp_channel)
#define SOFTCM_IOCTL_CREATE_ASYNC_FD	_SOFTCM_VIOWR(CREATE_ASYNC_FD, softcm_create_async_fd)
#define SOFTCM_IOCTL_CREATE_CQ		_SOFTCM_VIOWR(CREATE_CQ, softcm_create_cq)
#define SOFTCM_IOCTL_DESTROY_CQ		_SOFTCM_VIOWR(DESTROY_CQ, softcm_destroy_cq)
#define SOFTCM_IOCTL_REQ_NOTIFY_CQ	_SOFTCM_VIOWR(REQ_NOTIFY_CQ, softcm_req_notify_cq)
#define SOFTCM_IOCTL_POLL_CQ		_SOFTCM_VIOWR(POLL_CQ, softcm_poll_cq)
#define SOFTCM_IOCTL_CREATE_QP		_SOFTCM_VIOWR(CREATE_QP, softcm_create_qp)
#define SOFTCM_IOCTL_MODIFY_QP		_SOFTCM_VIOWR(MODIFY_QP, softcm_modify_qp)
#define SOFTCM_IOCTL_QUERY_QP		_SOFTCM_VIOWR(QUERY_QP, softcm_query_qp)
#define SOFTCM_IOCTL_DESTROY_QP		_SOFTCM_VIOWR(DESTROY_QP, softcm_destroy_qp)
#define SOFTCM_IOCTL_POST_SEND		_SOFTCM_VIOWR(POST_SEND, softcm_post)
#define SOFTCM_IOCTL_POST_RECV		_SOFTCM_VIOWR(POST_RECV, softcm_post)
#define SOFTCM_IOCTL_CREATE_AH		_SOFTCM_VIOWR(CREATE_AH, softcm_create_ah)
#define SOFTCM_IOCTL_DESTROY_AH		_SOFTCM_VIOWR(DESTROY_AH, softcm_destroy_obj)
#define SOFTCM_IOCTL_DOORBELL		_SOFTCM_VIOWR(DOORBELL, softcm_doorbell)

#endif /* _SOFTCM_UAPI_SOFTCM_H */
