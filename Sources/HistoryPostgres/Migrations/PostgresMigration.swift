/// One numbered schema file of `migrations/postgres/`, as data:
/// `0001_init.sql` is version 1, "init".
///
/// A migration is never modified once it has shipped; its checksum is
/// recorded when it is applied, and a database whose recorded checksum
/// differs is refused (see `PostgresMigrator`). The checksum is the one the
/// SQLite store records (FNV-1a 64 of the exact SQL text, 16 hex digits), so
/// both stores' `schema_migrations` read the same way.
public struct PostgresMigration: Hashable, Sendable {
    public let version: Int
    public let name: String
    public let sql: String

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }

    /// Parses `NNNN_name.sql`; the digits are the version (at least 1).
    public init(fileName: String, sql: String) throws(PostgresMigrationError) {
        let bad = PostgresMigrationError.refused(reason: "migration file name \"\(fileName)\" is not NNNN_name.sql")
        guard fileName.hasSuffix(".sql") else { throw bad }
        let stem = fileName.dropLast(4)
        guard let underscore = stem.firstIndex(of: "_") else { throw bad }
        let digits = stem[..<underscore]
        let name = stem[stem.index(after: underscore)...]
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
              let version = Int(digits), version >= 1, !name.isEmpty else { throw bad }
        self.init(version: version, name: String(name), sql: sql)
    }

    /// FNV-1a 64 of the SQL text's UTF-8 bytes, 16 lowercase hex digits.
    public var checksum: String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in sql.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// `0001_init`, for messages.
    public var label: String {
        let digits = String(version)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits + "_" + name
    }
}

extension PostgresMigration {
    /// The migrations embedded at build time from `migrations/postgres/`
    /// (see the EmbedMigrations plugin).
    public static func bundled() throws(PostgresMigrationError) -> [PostgresMigration] {
        var migrations: [PostgresMigration] = []
        for file in embeddedMigrationFiles {
            migrations.append(try PostgresMigration(fileName: file.name, sql: file.sql))
        }
        return migrations
    }
}
