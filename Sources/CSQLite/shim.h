#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a cast macro Swift cannot import; binding text and
/// blobs with it makes SQLite copy the bytes before the call returns.
static inline sqlite3_destructor_type csqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

/// Asks the CPU to bring `length` bytes from `start` into its caches
/// without waiting for them, one prefetch every 64 bytes (the cache line of
/// x86-64 and most ARM cores; where lines are longer, some prefetches
/// repeat, which is harmless). Swift has no prefetch intrinsic.
static inline void csqlite_prefetch(const void *start, int length) {
    const char *bytes = (const char *)start;
    for (int offset = 0; offset < length; offset += 64) {
        __builtin_prefetch(bytes + offset);
    }
}

/// Hardens a connection against a database file that may be hostile (one
/// swapped in or edited by someone else), before any of the file's schema is
/// read. sqlite3_db_config is variadic, which Swift cannot call.
/// - SQLITE_DBCONFIG_DEFENSIVE: no statement can corrupt the file on purpose
///   (writes to sqlite_schema, PRAGMA writable_schema, journal_mode=OFF...).
/// - SQLITE_DBCONFIG_TRUSTED_SCHEMA off: SQL functions with side effects and
///   virtual tables cannot be used from the file's views, triggers, CHECK
///   constraints, defaults, generated columns and indexes.
/// - SQLITE_DBCONFIG_ENABLE_TRIGGER off: the schema creates no trigger, so
///   none is ever run, even one a tampered file carries.
/// Returns SQLITE_OK, or the first failing call's result code.
static inline int csqlite_harden(sqlite3 *database) {
    int code = sqlite3_db_config(database, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)0);
    if (code != SQLITE_OK) return code;
    code = sqlite3_db_config(database, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)0);
    if (code != SQLITE_OK) return code;
    return sqlite3_db_config(database, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, (int *)0);
}

/// Reads one on/off setting of sqlite3_db_config (tests of `csqlite_harden`):
/// 1 or 0, or -1 when SQLite refused the call.
static inline int csqlite_config_flag(sqlite3 *database, int option) {
    int value = -1;
    if (sqlite3_db_config(database, option, -1, &value) != SQLITE_OK) return -1;
    return value;
}

/// Turns SQLite's memory statistics off, which only works before the library
/// initializes (SQLITE_MISUSE after). With them on (Debian's build default),
/// every sqlite3_malloc and sqlite3_free takes one process-wide mutex, which
/// every reader thread and the writer share; the store reads no statistic.
/// sqlite3_config is variadic, which Swift cannot call.
static inline int csqlite_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
#endif
