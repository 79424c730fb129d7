// Living under an address-space limit (`ulimit -v`, RLIMIT_AS). glibc reserves 64 MiB of
// address space per malloc arena and a stack per thread, and gRPC aborts the process when it
// cannot start one of its threads: the programs cap the arenas and check their headroom first.
// glibc-only (M_ARENA_MAX, pthread_getattr_default_np), as the project is (Debian).
#pragma once

#include <malloc.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <cstddef>
#include <cstdlib>
#include <string_view>
#include <thread>

#include "support/error.h"

namespace tuner {

/// glibc malloc arenas a program keeps under an address-space limit (the measurement child
/// gets it as MALLOC_ARENA_MAX, which an emulated child's libc reads too).
constexpr int kMallocArenasUnderLimit = 2;

/// Under an address-space limit, caps glibc's malloc arenas (unless MALLOC_ARENA_MAX says
/// otherwise): a program with a dozen threads would otherwise spend the limit on them.
inline void cap_malloc_arenas_under_rlimit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return;
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, kMallocArenasUnderLimit);
}

/// Thread stacks to reserve for a gRPC service: tuner-server and tuner-worker run 12 threads
/// on 2 cores, and gRPC's pools grow with the cores.
inline int grpc_service_threads() { return 16 + int(std::thread::hardware_concurrency()); }

/// Fails with one error line naming the limit when the address-space limit leaves less than
/// `threads` thread stacks and 32 MiB free, before `program` starts gRPC's threads.
inline void check_room_for_threads(std::string_view program, int threads) {
  rlimit rl{};
  if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return;
  size_t stack = 8u << 20;
  pthread_attr_t attr;
  if (pthread_getattr_default_np(&attr) == 0) {
    pthread_attr_getstacksize(&attr, &stack);
    pthread_attr_destroy(&attr);
  }
  size_t bytes = size_t(threads) * stack + (32u << 20);
  // A reservation counts against RLIMIT_AS like any mapping, and fails as the threads would.
  void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p != MAP_FAILED) {
    munmap(p, bytes);
    return;
  }
  HOST_ERROR() << "the address-space limit (ulimit -v " << (rl.rlim_cur >> 10) << " KiB) leaves "
               << program << " less than the " << (bytes >> 20)
               << " MiB it needs to start its threads; raise the limit";
}

}  // namespace tuner
