/// The migrators' refusal rules, written once as pure functions: which list
/// of migrations a build may ship, and which recorded history a database
/// may have for this build to open it. Each backend's migrator reads what
/// its database recorded, asks the plan, and applies what is missing in its
/// own transactions; nothing here touches a database.
public enum MigrationPlan {
    /// The list in version order; refused unless the versions are exactly
    /// 1, 2, ..., n (no gap, no duplicate).
    public static func ordered(_ migrations: [Migration]) throws(MigrationRefusal) -> [Migration] {
        let sorted = migrations.sorted { $0.version < $1.version }
        for (offset, migration) in sorted.enumerated() where migration.version != offset + 1 {
            if offset > 0, sorted[offset - 1].version == migration.version {
                throw MigrationRefusal(reason: "two migration files have version \(migration.version)")
            }
            throw MigrationRefusal(reason: "migration versions must be 1, 2, 3, ... without gaps; "
                + "expected \(offset + 1), found \(migration.label)")
        }
        return sorted
    }

    /// ``ordered(_:)`` with its refusal as the backend's own error.
    public static func ordered<Failure: Error>(_ migrations: [Migration],
                                               refusedAs refusal: (_ reason: String) -> Failure) throws(Failure) -> [Migration] {
        do {
            return try ordered(migrations)
        } catch {
            throw refusal(error.reason)
        }
    }

    /// Applies, in order, the migrations of `migrations` past `applied`
    /// (the highest version the database recorded); returns their versions.
    /// Each backend supplies only how one migration is applied.
    public static func applyMissing<Failure: Error>(_ migrations: [Migration], after applied: Int,
                                                    _ apply: (Migration) throws(Failure) -> Void) throws(Failure) -> [Int] {
        var appliedNow: [Int] = []
        for migration in migrations where migration.version > applied {
            try apply(migration)
            appliedNow.append(migration.version)
        }
        return appliedNow
    }

    /// How many of `known` (as `ordered` returned it) the database applied,
    /// given what it `recorded` in version order. Refused, before anything
    /// is applied: a version this build does not know (the database was
    /// written by newer code), a hole in 1...k, a checksum that differs
    /// (a shipped file was edited).
    public static func appliedCount(recorded: [AppliedMigration], known: [Migration]) throws(MigrationRefusal) -> Int {
        let newestKnown = known.last?.version ?? 0
        if let newest = recorded.last, newest.version > newestKnown {
            throw MigrationRefusal(reason: "the database has schema version \(newest.version) (\(UntrustedText.quoted(newest.name))), "
                + "newer than this build knows (\(newestKnown)); refusing to open it with older code")
        }
        for (offset, record) in recorded.enumerated() {
            guard record.version == offset + 1 else {
                throw MigrationRefusal(reason: "the database's applied migrations have a hole before "
                    + "version \(record.version); refusing to guess what happened")
            }
            let migration = known[offset]
            guard migration.checksum == record.checksum else {
                throw MigrationRefusal(reason: "migration \(migration.label) changed after it was applied "
                    + "(recorded checksum \(UntrustedText.quoted(record.checksum)), file has \(migration.checksum)); "
                    + "shipped migrations must never be edited: add a new one instead")
            }
        }
        return recorded.count
    }
}

/// A migration as a database recorded it in `schema_migrations`.
public struct AppliedMigration: Hashable, Sendable {
    public let version: Int
    public let name: String
    public let checksum: String

    public init(version: Int, name: String, checksum: String) {
        self.version = version
        self.name = name
        self.checksum = checksum
    }
}

/// Why the migrations or the database cannot be used by this build:
/// nothing was applied, and trying again will not help.
public struct MigrationRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    public let reason: String

    public init(reason: String) {
        self.reason = reason
    }

    public var description: String { reason }
}
