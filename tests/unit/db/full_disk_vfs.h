// A disk that fills up on demand: a SQLite VFS, made the default while it lives, that forwards
// to the real one and fails every write with SQLITE_FULL while `full` is set. Connections opened
// while it lives go through it (open them inside its scope, close them before it ends).
#pragma once

#include <sqlite3.h>

#include <atomic>
#include <stdexcept>

namespace tuner::db::test {

class FullDiskVfs {
 public:
  /// Set to make every write fail as on a full disk.
  static inline std::atomic<bool> full{false};

  FullDiskVfs() {
    real_ = sqlite3_vfs_find(nullptr);
    vfs_ = *real_;
    vfs_.zName = "tuner-full-disk";
    vfs_.szOsFile = int(sizeof(File)) + real_->szOsFile;
    vfs_.pAppData = real_;
    vfs_.xOpen = &open;
    if (sqlite3_vfs_register(&vfs_, 1) != SQLITE_OK) throw std::runtime_error("vfs register");
  }
  ~FullDiskVfs() {
    full = false;
    sqlite3_vfs_unregister(&vfs_);
    sqlite3_vfs_register(real_, 1);
  }
  FullDiskVfs(const FullDiskVfs&) = delete;
  FullDiskVfs& operator=(const FullDiskVfs&) = delete;

 private:
  struct File {
    sqlite3_file base;
    sqlite3_file* real;  // the real VFS's file, stored right after this struct
  };
  static sqlite3_file* real(sqlite3_file* f) { return reinterpret_cast<File*>(f)->real; }

  static int open(sqlite3_vfs* vfs, const char* name, sqlite3_file* f, int flags, int* out) {
    auto* r = static_cast<sqlite3_vfs*>(vfs->pAppData);
    auto* file = reinterpret_cast<File*>(f);
    file->real = reinterpret_cast<sqlite3_file*>(file + 1);
    file->base.pMethods = nullptr;
    int rc = r->xOpen(r, name, file->real, flags, out);
    // SQLite calls xClose only when pMethods is set: set it exactly when the real file is open.
    if (file->real->pMethods) file->base.pMethods = &methods();
    return rc;
  }
  static const sqlite3_io_methods& methods() {
    static const sqlite3_io_methods m = {
        3,
        [](sqlite3_file* f) { return real(f)->pMethods->xClose(real(f)); },
        [](sqlite3_file* f, void* p, int n, sqlite3_int64 o) {
          return real(f)->pMethods->xRead(real(f), p, n, o);
        },
        [](sqlite3_file* f, const void* p, int n, sqlite3_int64 o) {
          return full ? SQLITE_FULL : real(f)->pMethods->xWrite(real(f), p, n, o);
        },
        [](sqlite3_file* f, sqlite3_int64 n) {
          return full ? SQLITE_FULL : real(f)->pMethods->xTruncate(real(f), n);
        },
        [](sqlite3_file* f, int fl) { return real(f)->pMethods->xSync(real(f), fl); },
        [](sqlite3_file* f, sqlite3_int64* n) { return real(f)->pMethods->xFileSize(real(f), n); },
        [](sqlite3_file* f, int l) { return real(f)->pMethods->xLock(real(f), l); },
        [](sqlite3_file* f, int l) { return real(f)->pMethods->xUnlock(real(f), l); },
        [](sqlite3_file* f, int* r) {
          return real(f)->pMethods->xCheckReservedLock(real(f), r);
        },
        [](sqlite3_file* f, int op, void* a) {
          return real(f)->pMethods->xFileControl(real(f), op, a);
        },
        [](sqlite3_file* f) { return real(f)->pMethods->xSectorSize(real(f)); },
        [](sqlite3_file* f) { return real(f)->pMethods->xDeviceCharacteristics(real(f)); },
        [](sqlite3_file* f, int pg, int sz, int ext, void volatile** p) {
          return real(f)->pMethods->xShmMap(real(f), pg, sz, ext, p);
        },
        [](sqlite3_file* f, int o, int n, int fl) {
          return real(f)->pMethods->xShmLock(real(f), o, n, fl);
        },
        [](sqlite3_file* f) { real(f)->pMethods->xShmBarrier(real(f)); },
        [](sqlite3_file* f, int d) { return real(f)->pMethods->xShmUnmap(real(f), d); },
        [](sqlite3_file* f, sqlite3_int64 o, int n, void** p) {
          return real(f)->pMethods->xFetch(real(f), o, n, p);
        },
        [](sqlite3_file* f, sqlite3_int64 o, void* p) {
          return real(f)->pMethods->xUnfetch(real(f), o, p);
        },
    };
    return m;
  }

  sqlite3_vfs* real_;
  sqlite3_vfs vfs_;
};

}  // namespace tuner::db::test
