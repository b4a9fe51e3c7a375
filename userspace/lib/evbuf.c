// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * A channel's buffered records.  One read() returns as many records as
 * the channel's buffer holds (from one, doubling up to RBUF_MAX each time
 * a read() fills it: a channel of one id stays small), and later calls
 * are served from the buffer, oldest first, or the oldest of one id for a
 * synchronous id's wait (event.c).  poll() on the file sees what the
 * library holds through the shared page's held, kept equal to the number
 * of records buffered here.
 *
 * No lock is held across read(): one thread reads (@reading), the others
 * wait on the channel's condition for its records or its end.  An id that
 * is destroyed or migrated takes its buffered records with it, dropped or
 * moved; records of it that a read() under way returns afterwards follow
 * it through the channel's departures.  A dropped record counts as given
 * back, so that the destruction waiting for the id's events ends; a moved
 * one counts in events_moved, so that the migration does not wait for an
 * event it never handed out, and is tagged with the migration, so that
 * given back on the new channel it does not count a second time.
 *
 * A migrated id's order holds on its new channel: until the records of
 * it that the old channel's reader had taken from the kernel have all
 * arrived (the kernel's count at MIGRATE_ID says how many), the id's
 * newer records, read from the new file, wait (@mig_hold), and a caller
 * that wants one waits for the arrival rather than read on; the arrival
 * wakes the new file's pollers (softcm_evbuf_arrived()).
 *
 * Locks: a channel's lock, then (the two channels of a migration) the
 * other's in address order; an id's mut is never taken under either.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define RBUF_MAX	32
#define ARRIVAL_WAIT_MS	1000		/* softcm_evbuf_arrived()'s bound */

static void id_count(struct softcm_id_priv *priv, uint32_t *count, uint32_t n)
{
	pthread_mutex_lock(&priv->mut);
	*count += n;
	pthread_cond_broadcast(&priv->cond);
	pthread_mutex_unlock(&priv->mut);
}

/*
 * One more of the id's events is given back: a destroy or migrate may go
 * on.  One its current migration moved (@mig_gen, the record's) counts in
 * events_moved already: events_moved_acked lets the wait count it once.
 */
void softcm_id_event_acked(struct softcm_id_priv *priv, uint32_t mig_gen)
{
	pthread_mutex_lock(&priv->mut);
	priv->events_completed++;
	if (mig_gen && mig_gen == priv->mig_gen)
		priv->events_moved_acked++;
	pthread_cond_broadcast(&priv->cond);
	pthread_mutex_unlock(&priv->mut);
}

static struct softcm_id_priv *rec_priv(const struct softcm_evrec *rec)
{
	return (struct softcm_id_priv *)(uintptr_t)rec->full.ev.uid;
}

/*
 * A record its id's migration has not let out yet: one read from the new
 * file (not moved or forwarded by the migration) while older ones may be
 * on their way.  mig_gen is set before mig_hold is.
 */
static int held_back(const struct softcm_evrec *rec)
{
	struct softcm_id_priv *priv = rec_priv(rec);

	return priv && __atomic_load_n(&priv->mig_hold, __ATOMIC_ACQUIRE) &&
	       rec->mig_gen != __atomic_load_n(&priv->mig_gen, __ATOMIC_RELAXED);
}

/* Before the lock that guards nr_held is dropped: poll() sees it at once. */
static void publish_held(struct softcm_channel *sch)
{
	if (sch->page)
		__atomic_store_n(&sch->page->held, sch->nr_held, __ATOMIC_RELEASE);
}

static void append(struct softcm_channel *sch, struct softcm_evrec *rec)
{
	rec->next = NULL;
	*sch->tail = rec;
	sch->tail = &rec->next;
	sch->nr_held++;
}

static struct softcm_evrec *unlink_at(struct softcm_channel *sch, struct softcm_evrec **link)
{
	struct softcm_evrec *rec = *link;

	*link = rec->next;
	if (sch->tail == &rec->next)
		sch->tail = link;
	sch->nr_held--;
	rec->next = NULL;
	return rec;
}

/*
 * @rec, forwarded, goes before the records of its id that @to's reader
 * read from the file after the migration: they are newer.
 */
static void insert_forwarded(struct softcm_channel *to, struct softcm_evrec *rec)
{
	struct softcm_id_priv *priv = rec_priv(rec);
	struct softcm_evrec **link;

	for (link = &to->head; *link; link = &(*link)->next)
		if (rec_priv(*link) == priv && (*link)->mig_gen != rec->mig_gen)
			break;
	rec->next = *link;
	*link = rec;
	if (to->tail == link)
		to->tail = &rec->next;
	to->nr_held++;
}

/*
 * @rec goes into @to's buffer, at its end unless @forwarded: it holds its
 * file if that is another's.
 */
static void add_moved(struct softcm_channel *to, struct softcm_evrec *rec, int forwarded)
{
	if (rec->from == to && rec->holds_from) {
		/* @to's own user (the caller's) keeps it open. */
		softcm_channel_put(rec->from);
		rec->holds_from = 0;
	} else if (rec->from != to && !rec->holds_from) {
		softcm_channel_get(rec->from);
		rec->holds_from = 1;
	}
	rec->mig_gen = rec_priv(rec)->mig_gen;
	if (forwarded)
		insert_forwarded(to, rec);
	else
		append(to, rec);
}

void softcm_evrec_free(struct softcm_evrec *rec)
{
	if (rec->holds_from)
		softcm_channel_put(rec->from);
	free(rec);
}

/*
 * A record nobody will be handed: a CONNECT_REQUEST's new id goes, in the
 * file it was read from, and the event counts as given back.
 */
static void drop_list(struct softcm_evrec *list)
{
	struct softcm_evrec *rec;

	while ((rec = list)) {
		list = rec->next;
		if (rec->full.ev.event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			struct softcm_destroy_id d = { .handle = rec->full.ev.handle };

			ioctl(rec->from->channel.fd, SOFTCM_IOCTL_DESTROY_ID, &d);
		}
		if (rec_priv(rec))
			softcm_id_event_acked(rec_priv(rec), rec->mig_gen);
		softcm_evrec_free(rec);
	}
}

static struct softcm_departure *departure_of(struct softcm_channel *sch,
					     const struct softcm_id_priv *priv)
{
	struct softcm_departure *d;

	for (d = sch->departures; d; d = d->next)
		if (d->priv == priv)
			return d;
	return NULL;
}

struct forward {
	struct softcm_evrec *rec;
	struct softcm_channel *to;
};

/*
 * Records of migrated ids, read after their migration took the rest: to
 * the destination's buffer, after those moved and before the newer ones
 * read there, as the migration's wait expects.
 */
static void forward(struct forward *fwd, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct softcm_id_priv *priv = rec_priv(fwd[i].rec);
		struct softcm_channel *to = fwd[i].to;

		/*
		 * Counted before @to's buffer shows it: once there, it may be
		 * taken and given back, and the migration's wait would end
		 * with the count still to come.  The migration stays in
		 * softcm_evbuf_departed() until this cycle's forwarding is over.
		 */
		id_count(priv, &priv->events_moved, 1);
		pthread_mutex_lock(&to->lock);
		add_moved(to, fwd[i].rec, 1);
		publish_held(to);
		pthread_cond_broadcast(&to->cond);
		pthread_mutex_unlock(&to->lock);
	}
}

/*
 * The reader's read(), with no lock held: as many records as it has
 * spare ones for, up to the buffer's size.  The number read, or -1.
 */
static ssize_t fill(struct softcm_channel *sch)
{
	const size_t size = sizeof(struct softcm_event_full);
	struct softcm_evrec *rec;
	ssize_t len;
	size_t max;

	if (!sch->rbuf) {
		sch->rbuf = malloc(size);
		if (!sch->rbuf)
			return softcm_err(ENOMEM);
		sch->rbuf_cap = 1;
	}
	while (sch->nr_spare < sch->rbuf_cap) {
		rec = malloc(sizeof(*rec));
		if (!rec)
			break;
		rec->next = sch->spare;
		sch->spare = rec;
		sch->nr_spare++;
	}
	if (!sch->nr_spare)
		return softcm_err(ENOMEM);
	max = sch->nr_spare < sch->rbuf_cap ? sch->nr_spare : sch->rbuf_cap;
	len = read(sch->channel.fd, sch->rbuf, max * size);
	if (len < 0)
		return -1;
	if (!len || len % size)
		return softcm_err(EIO);
	return len / size;
}

/* A full buffer asks for a bigger one next time. */
static void grow(struct softcm_channel *sch, ssize_t n)
{
	struct softcm_event_full *rbuf;

	if ((size_t)n < sch->rbuf_cap || sch->rbuf_cap >= RBUF_MAX)
		return;
	rbuf = realloc(sch->rbuf, 2 * sch->rbuf_cap * sizeof(*rbuf));
	if (!rbuf)
		return;
	sch->rbuf = rbuf;
	sch->rbuf_cap *= 2;
}

/*
 * The @n records the reader read go to the buffer, unless their id is
 * departing: then to @drops or @fwd, for after the lock.
 */
static unsigned int stash(struct softcm_channel *sch, ssize_t n, struct softcm_evrec **drops,
			  struct forward *fwd)
{
	struct softcm_departure *d;
	struct softcm_evrec *rec;
	unsigned int nfwd = 0;
	ssize_t i;

	for (i = 0; i < n; i++) {
		rec = sch->spare;
		sch->spare = rec->next;
		sch->nr_spare--;
		memcpy(&rec->full, &sch->rbuf[i], sizeof(rec->full));
		rec->from = sch;
		rec->holds_from = 0;
		rec->mig_gen = 0;

		/*
		 * The kernel reports nothing for an id before it has a uid
		 * (a new id before rdma_accept()): a uid of 0 would be a
		 * kernel bug, and there is no id to give its event to.
		 */
		if (rec_priv(rec))
			__atomic_add_fetch(&rec_priv(rec)->events_read, 1, __ATOMIC_RELAXED);
		d = rec_priv(rec) ? departure_of(sch, rec_priv(rec)) : NULL;
		if (!rec_priv(rec) || (d && !d->to)) {
			rec->next = *drops;
			*drops = rec;
		} else if (d) {
			d->forwarded++;
			fwd[nfwd].rec = rec;
			fwd[nfwd++].to = d->to;
		} else {
			append(sch, rec);
		}
	}
	publish_held(sch);
	return nfwd;
}

/*
 * Cancellation: read() and pthread_cond_wait() are cancellation points,
 * and rdma_get_cm_event() is cancel-safe in librdmacm (a plain read()).
 * A reader cancelled in read() gives the reading up, or every later call
 * would wait for it for ever; a waiter cancelled in the wait, which
 * returns holding the lock, lets it go.
 */
static void unlock_cleanup(void *lock)
{
	pthread_mutex_unlock(lock);
}

static void reader_cleanup(void *arg)
{
	struct softcm_channel *sch = arg;

	pthread_mutex_lock(&sch->lock);
	sch->reading = 0;
	sch->cycles_done++;
	pthread_cond_broadcast(&sch->cond);
	pthread_mutex_unlock(&sch->lock);
}

/* Out of line: the cleanup's setjmp would clobber the caller's locals. */
static void wait_channel(struct softcm_channel *sch)
{
	pthread_cleanup_push(unlock_cleanup, &sch->lock);
	pthread_cond_wait(&sch->cond, &sch->lock);
	pthread_cleanup_pop(0);
}

static int wait_channel_until(struct softcm_channel *sch, const struct timespec *ts)
{
	int ret;

	pthread_cleanup_push(unlock_cleanup, &sch->lock);
	ret = pthread_cond_timedwait(&sch->cond, &sch->lock, ts);
	pthread_cleanup_pop(0);
	return ret;
}

static void fill_cancelable(struct softcm_channel *sch, ssize_t *n)
{
	pthread_cleanup_push(reader_cleanup, sch);
	*n = fill(sch);
	pthread_cleanup_pop(0);
}

/*
 * The oldest buffered record (of @priv, unless NULL), reading when there
 * is none: blocks unless the file is O_NONBLOCK (EAGAIN when nothing is
 * buffered and the kernel has nothing either).  The record is the
 * caller's to free (softcm_evrec_free()).  EACCES in a forked child.
 */
int softcm_evbuf_take(struct softcm_channel *sch, struct softcm_id_priv *priv,
		      struct softcm_evrec **recp)
{
	struct softcm_evrec **link, *rec = NULL, *drops;
	struct forward fwd[RBUF_MAX];
	unsigned int nfwd;
	int err = 0, held;
	ssize_t n;

	/* The records and the page of a forked child's channel are its parent's. */
	if (softcm_channel_check(sch))
		return -1;
	pthread_mutex_lock(&sch->lock);
	for (;;) {
		held = 0;
		for (link = &sch->head; *link; link = &(*link)->next) {
			if (priv && rec_priv(*link) != priv)
				continue;
			if (!held_back(*link))
				break;
			held = 1;
		}
		if (*link) {
			rec = unlink_at(sch, link);
			publish_held(sch);
			break;
		}
		if (err)
			break;
		/* A held-back record is let out soon: no read() that may block. */
		if (sch->reading || held) {
			wait_channel(sch);
			continue;
		}
		sch->reading = 1;
		sch->cycles++;
		pthread_mutex_unlock(&sch->lock);

		fill_cancelable(sch, &n);
		if (n < 0)
			err = errno;
		else
			grow(sch, n);

		pthread_mutex_lock(&sch->lock);
		sch->reading = 0;
		drops = NULL;
		nfwd = n > 0 ? stash(sch, n, &drops, fwd) : 0;
		if (drops || nfwd) {
			pthread_cond_broadcast(&sch->cond);
			/* A departure waits for this before it ends. */
			sch->forwarding++;
			pthread_mutex_unlock(&sch->lock);
			drop_list(drops);
			forward(fwd, nfwd);
			pthread_mutex_lock(&sch->lock);
			sch->forwarding--;
		}
		sch->cycles_done++;
		pthread_cond_broadcast(&sch->cond);
	}
	pthread_mutex_unlock(&sch->lock);
	if (!rec)
		return softcm_err(err);
	*recp = rec;
	return 0;
}

/*
 * rdma_destroy_id(), after the kernel's id went: the id's buffered records
 * are dropped, and so will be those a read() under way returns, until
 * softcm_evbuf_departed().
 */
void softcm_evbuf_forget(struct softcm_channel *sch, struct softcm_id_priv *priv)
{
	struct softcm_evrec **link = &sch->head, *rec, *drops = NULL;

	pthread_mutex_lock(&sch->lock);
	while (*link) {
		if (rec_priv(*link) != priv) {
			link = &(*link)->next;
			continue;
		}
		rec = unlink_at(sch, link);
		rec->next = drops;
		drops = rec;
	}
	publish_held(sch);
	priv->departure.priv = priv;
	priv->departure.to = NULL;
	priv->departure.next = sch->departures;
	sch->departures = &priv->departure;
	pthread_mutex_unlock(&sch->lock);
	drop_list(drops);
}

/*
 * rdma_migrate_id(), before the kernel moves the id: its buffered records
 * go from @from to the end of @to's buffer, in order, and count in @to's
 * held before MIGRATE_ID wakes @to's pollers.  With @depart, those a
 * read() under way on @from returns follow, until softcm_evbuf_departed().
 * Returns how many moved now.  An id that stays on @from keeps them where
 * they are, counted as moved all the same: its migration waits for none.
 */
uint32_t softcm_evbuf_move(struct softcm_channel *from, struct softcm_channel *to,
			   struct softcm_id_priv *priv, int depart)
{
	struct softcm_channel *first = from < to ? from : to, *second = from < to ? to : from;
	struct softcm_evrec **link = &from->head, *rec;
	uint32_t n = 0;

	if (from == to) {
		pthread_mutex_lock(&from->lock);
		for (rec = from->head; rec; rec = rec->next) {
			if (rec_priv(rec) != priv)
				continue;
			rec->mig_gen = priv->mig_gen;
			n++;
		}
		pthread_mutex_unlock(&from->lock);
		goto out;
	}
	pthread_mutex_lock(&first->lock);
	pthread_mutex_lock(&second->lock);
	while (*link) {
		if (rec_priv(*link) != priv) {
			link = &(*link)->next;
			continue;
		}
		rec = unlink_at(from, link);
		add_moved(to, rec, 0);
		n++;
	}
	publish_held(from);
	publish_held(to);
	if (depart) {
		/* The id's records are read under @from's lock until it leaves. */
		priv->departure.read_before = __atomic_load_n(&priv->events_read,
							      __ATOMIC_RELAXED);
		priv->departure.forwarded = 0;
		priv->departure.priv = priv;
		priv->departure.to = to;
		priv->departure.next = from->departures;
		from->departures = &priv->departure;
	}
	pthread_cond_broadcast(&to->cond);
	pthread_mutex_unlock(&second->lock);
	pthread_mutex_unlock(&first->lock);
out:
	if (n)
		id_count(priv, &priv->events_moved, n);
	return n;
}

/*
 * The id's destruction or migration is over: nothing of it is read here.
 * Every record of the id the kernel returned is accounted for by now (the
 * caller waited for it, or the migration failed and the id stays), but a
 * read() cycle may still be dropping or forwarding some, touching the id
 * and the destination: we wait until no cycle is, so that nothing of the
 * id arrives anywhere after we return.  A cycle's forwarding takes no
 * lock we hold and never blocks, so the wait is short.
 */
void softcm_evbuf_departed(struct softcm_channel *sch, struct softcm_id_priv *priv)
{
	struct softcm_departure **link;

	pthread_mutex_lock(&sch->lock);
	while (sch->forwarding)
		wait_channel(sch);
	for (link = &sch->departures; *link; link = &(*link)->next) {
		if (*link == &priv->departure) {
			*link = priv->departure.next;
			break;
		}
	}
	pthread_mutex_unlock(&sch->lock);
}

/*
 * rdma_migrate_id() from @from to another channel @to, after MIGRATE_ID,
 * which counted @reported of the id's records as read: we wait until
 * those that @from's reader took have been forwarded to @to, then let out
 * the id's newer records there.  They have when the records read on
 * @from, before the id left and forwarded since, make @reported; or, since
 * a record read on @to inside MIGRATE_ID counts in @reported too, when
 * every read() cycle of @from under way at our look has ended (one that
 * took records returns at once; one asleep in the kernel holds nothing of
 * the id, but may sleep for ever).  Both failing at once needs two races
 * together: then ARRIVAL_WAIT_MS bounds the wait, at the cost of that
 * record's order.  Returns how many records were forwarded: they may have
 * come after MIGRATE_ID woke @to's pollers.  The departure stays until
 * softcm_evbuf_departed().
 */
uint32_t softcm_evbuf_arrived(struct softcm_channel *from, struct softcm_channel *to,
			      struct softcm_id_priv *priv, uint32_t reported)
{
	struct softcm_departure *d = &priv->departure;
	unsigned long started;
	struct timespec until;
	uint32_t forwarded;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ARRIVAL_WAIT_MS / 1000;
	until.tv_nsec += (ARRIVAL_WAIT_MS % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&from->lock);
	started = from->cycles;
	while (from->forwarding ||
	       ((int32_t)(d->read_before + d->forwarded - reported) < 0 &&
		(long)(from->cycles_done - started) < 0)) {
		if (wait_channel_until(from, &until) == ETIMEDOUT)
			break;
	}
	forwarded = d->forwarded;
	pthread_mutex_unlock(&from->lock);
	softcm_evbuf_release(to, priv);
	return forwarded;
}

/* The id's records on @to go out in order again; waiters look anew. */
void softcm_evbuf_release(struct softcm_channel *to, struct softcm_id_priv *priv)
{
	__atomic_store_n(&priv->mig_hold, 0, __ATOMIC_RELEASE);
	pthread_mutex_lock(&to->lock);
	pthread_cond_broadcast(&to->cond);
	pthread_mutex_unlock(&to->lock);
}
