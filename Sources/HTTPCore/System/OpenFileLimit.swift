import Glibc

/// Raises the soft limit on open files to the hard limit.
///
/// Every client connection is a descriptor, and many systems start a process
/// with a soft limit of 1,024 while allowing far more: without this,
/// `--max-connections 10000` would fail with EMFILE long before it applies.
/// Returns the limit in force afterwards (-1 when it cannot be read), so a
/// caller can warn when it is still below what it needs. The server and
/// history-load both call it: each connection, served or driven, is one
/// descriptor.
public func raiseOpenFileLimit() -> Int {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return -1 }
    if limit.rlim_cur < limit.rlim_max {
        var raised = limit
        raised.rlim_cur = limit.rlim_max
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 {
            limit = raised
        }
    }
    return limit.rlim_cur >= UInt(Int.max) ? Int.max : Int(limit.rlim_cur)
}

/// How many client connections a process may hold under `descriptorLimit`
/// open files, keeping `reserve` descriptors for everything else.
///
/// The reserve is not a nicety: when the process runs out of descriptors,
/// SQLite cannot open a reader's files (pages fail) and libdispatch, which
/// opens a file now and then to watch its thread pool, stops the process
/// outright. So the connection limit must leave room, and past it clients
/// get a 503 instead. Returns `requested` when the limit allows it (or is
/// unknown, -1), else what fits; nil when not even a handful fits.
public func connectionLimit(requested: Int, descriptorLimit: Int, reserve: Int) -> Int? {
    guard descriptorLimit >= 0 else { return requested }
    let available = descriptorLimit - reserve
    guard available >= minimumUsefulConnections else { return nil }
    return min(requested, available)
}

/// Below this many connections a server is not worth starting.
public let minimumUsefulConnections = 16
