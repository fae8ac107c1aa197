import CSQLite

/// What is set for the SQLite library itself, once per process, before any
/// connection or VFS initializes it (`sqlite3_config` works only then).
enum SQLiteLibrary {
    /// Evaluated once, by the first caller (Swift's lazy static); every
    /// path to the library goes through `prepare()` first.
    private static let prepared: Void = {
        // Memory statistics off: their mutex is taken on every allocation
        // of every connection (docs/performance.md, "Session 14"). Refused
        // when something initialized SQLite first, which costs only speed.
        _ = csqlite_disable_memory_statistics()
    }()

    static func prepare() {
        _ = prepared
    }
}
