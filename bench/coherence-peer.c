// What a user would write to measure cache-line contention by hand: pinned pthreads, C11
// atomics, a fixed amount of work timed with CLOCK_MONOTONIC from a shared start to the last
// thread's end (for the increments, the first thread to finish its share stops the others, and
// the increments made are counted). Prints one line per test: name, threads, the median of REPS
// runs, and the unit.
//
//   counter  every thread atomic_fetch_add(relaxed)s one shared counter  (M increments/s)
//   adjacent two threads (*p)++ their own volatile word, the words in one line  (M/s)
//   padded   the same, each word in a 128-byte-aligned line of its own  (M/s)
//   adjacent-atomic, padded-atomic  the same with atomic_fetch_add(relaxed) on each own word
//   ring     64-byte messages (7 payload words + a sequence word) through a ring of 64 lines
//            from the first CPU to the second, published and handed back a quarter of the ring
//            at a time (counts on lines of their own, release/acquire); every word checked, XORed
//            with what was sent and ORed into one difference a message (GB/s)
//
// Build: cc -O2 -pthread coherence-peer.c -o coherence-peer (bench/coherence-peer.sh does)
// Usage: coherence-peer CPU0,CPU1[,…]
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPS 7
#define OPS 4000000ULL
#define MSGS 4000000ULL
#define SLOTS 64

struct line { _Alignas(128) _Atomic uint64_t w[8]; };

static int cpus[256], ncpus;
static _Atomic int ready;
static _Atomic int go;
static struct line counter, adjacent, padded[2], ring[SLOTS], published, consumed;
static _Atomic uint64_t wrong, ops;
static _Atomic int stop;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void pin(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  if (pthread_setaffinity_np(pthread_self(), sizeof s, &s)) { perror("affinity"); exit(1); }
}

static uint64_t payload(uint64_t m, int w) { return (m * 0x9E3779B97F4A7C15ULL) ^ (uint64_t)w; }

struct job { int test, index, threads; };
enum { COUNTER, ADJACENT, PADDED, ADJACENT_ATOMIC, PADDED_ATOMIC, RING };

static void *worker(void *arg) {
  struct job *j = arg;
  pin(cpus[j->index]);
  atomic_fetch_add(&ready, 1);
  while (!atomic_load(&go)) {}
  if (j->test != RING) {
    // Each thread makes OPS increments in chunks, and the first to finish stops the others:
    // a thread left running alone would run uncontended and inflate the rate.
    _Atomic uint64_t *a = j->test == COUNTER ? &counter.w[0]
                        : j->test == ADJACENT_ATOMIC ? &adjacent.w[j->index]
                        : &padded[j->index].w[0];
    volatile uint64_t *p = j->test == ADJACENT ? (volatile uint64_t *)&adjacent.w[j->index]
                                               : (volatile uint64_t *)&padded[j->index].w[0];
    int plain = j->test == ADJACENT || j->test == PADDED;
    uint64_t done = 0;
    while (done < OPS && !atomic_load_explicit(&stop, memory_order_relaxed)) {
      if (plain) for (int k = 0; k < 256; k++) (*p)++;
      else for (int k = 0; k < 256; k++) atomic_fetch_add_explicit(a, 1, memory_order_relaxed);
      done += 256;
    }
    atomic_store(&stop, 1);
    atomic_fetch_add(&ops, done);
  } else if (j->index == 0) {
    uint64_t back = atomic_load_explicit(&consumed.w[0], memory_order_acquire);
    for (uint64_t m = 0; m < MSGS; m++) {
      while (m >= back + SLOTS) back = atomic_load_explicit(&consumed.w[0], memory_order_acquire);
      struct line *s = &ring[m & (SLOTS - 1)];
      for (int w = 0; w < 7; w++) atomic_store_explicit(&s->w[w], payload(m, w), memory_order_relaxed);
      atomic_store_explicit(&s->w[7], m + 1, memory_order_relaxed);
      if ((m + 1) % (SLOTS / 4) == 0) atomic_store_explicit(&published.w[0], m + 1, memory_order_release);
    }
    atomic_store_explicit(&published.w[0], MSGS, memory_order_release);
  } else {
    uint64_t bad = 0, seen = atomic_load_explicit(&published.w[0], memory_order_acquire);
    for (uint64_t m = 0; m < MSGS; m++) {
      while (m >= seen) seen = atomic_load_explicit(&published.w[0], memory_order_acquire);
      struct line *s = &ring[m & (SLOTS - 1)];
      uint64_t diff = atomic_load_explicit(&s->w[7], memory_order_relaxed) ^ (m + 1);
      for (int w = 0; w < 7; w++) diff |= atomic_load_explicit(&s->w[w], memory_order_relaxed) ^ payload(m, w);
      bad += diff != 0;
      if ((m + 1) % (SLOTS / 4) == 0) atomic_store_explicit(&consumed.w[0], m + 1, memory_order_release);
    }
    atomic_fetch_add(&wrong, bad);
  }
  return NULL;
}

// One timed run of `test` on the first `threads` CPUs; seconds.
static double once(int test, int threads) {
  pthread_t t[256];
  struct job j[256];
  atomic_store(&ready, 0);
  atomic_store(&go, 0);
  atomic_store(&stop, 0);
  atomic_store(&ops, 0);
  memset(ring, 0, sizeof ring);
  memset(&consumed, 0, sizeof consumed);
  memset(&published, 0, sizeof published);
  for (int i = 0; i < threads; i++) {
    j[i] = (struct job){test, i, threads};
    pthread_create(&t[i], NULL, worker, &j[i]);
  }
  while (atomic_load(&ready) < threads) {}
  double t0 = now();
  atomic_store(&go, 1);
  for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
  return now() - t0;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

// `work` is the ring's GB a run; the increments' rate counts the increments made (M).
static void report(const char *name, int test, int threads, double work, const char *unit) {
  double v[REPS];
  for (int r = 0; r < REPS; r++) {
    double t = once(test, threads);
    v[r] = (test == RING ? work : atomic_load(&ops) / 1e6) / t;
  }
  qsort(v, REPS, sizeof v[0], cmp);
  printf("%s %d %.4f %s\n", name, threads, v[REPS / 2], unit);
}

int main(int argc, char **argv) {
  if (argc != 2) { fprintf(stderr, "usage: %s CPU0,CPU1[,...]\n", argv[0]); return 2; }
  for (char *c = strtok(argv[1], ","); c && ncpus < 256; c = strtok(NULL, ",")) cpus[ncpus++] = atoi(c);
  if (ncpus < 2) { fprintf(stderr, "give at least two CPUs\n"); return 2; }
  for (int k = 1; k < ncpus; k *= 2) report("counter", COUNTER, k, k * OPS / 1e6, "M/s");
  report("counter", COUNTER, ncpus, ncpus * OPS / 1e6, "M/s");
  report("adjacent", ADJACENT, 2, 2 * OPS / 1e6, "M/s");
  report("padded", PADDED, 2, 2 * OPS / 1e6, "M/s");
  report("adjacent-atomic", ADJACENT_ATOMIC, 2, 2 * OPS / 1e6, "M/s");
  report("padded-atomic", PADDED_ATOMIC, 2, 2 * OPS / 1e6, "M/s");
  report("ring", RING, 2, MSGS * 64 / 1e9, "GB/s");
  if (atomic_load(&wrong)) { fprintf(stderr, "ring: %lu wrong payload words\n", (unsigned long)atomic_load(&wrong)); return 1; }
  return 0;
}
