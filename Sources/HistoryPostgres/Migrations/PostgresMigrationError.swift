/// Why the PostgreSQL schema could not be brought up to date.
public enum PostgresMigrationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The migrations or the database are not what this code can work with
    /// (a tampered or newer schema, a list with gaps): nothing was applied,
    /// and trying again will not help.
    case refused(reason: String)
    /// A migration's SQL failed; its transaction was rolled back, so the
    /// database holds every migration before it and nothing of it.
    case failed(migration: String, PostgresError)
    /// Talking to the database failed (connecting, the lock, the
    /// bookkeeping table); `isTransient` on the error says whether to retry.
    case database(PostgresError)

    public var description: String {
        switch self {
        case .refused(let reason): "migrations: \(reason)"
        case .failed(let migration, let error): "migrations: \(migration) failed and was rolled back: \(error)"
        case .database(let error): "migrations: \(error)"
        }
    }
}
