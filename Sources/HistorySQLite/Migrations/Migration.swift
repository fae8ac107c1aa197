import HistoryStore
/// One numbered schema file, as data: `0001_init.sql` is version 1, "init".
///
/// A migration is never modified once it has shipped; its checksum (FNV-1a
/// 64 of the exact SQL text) is recorded when it is applied, and a database
/// whose recorded checksum differs is refused (see `Migrator`).
struct Migration: Hashable, Sendable {
    let version: Int
    let name: String
    let sql: String

    init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }

    /// Parses `NNNN_name.sql`; the digits are the version (at least 1).
    init(fileName: String, sql: String) throws(StoreError) {
        let bad = StoreError.migration(reason: "migration file name \"\(fileName)\" is not NNNN_name.sql")
        guard fileName.hasSuffix(".sql") else { throw bad }
        let stem = fileName.dropLast(4)
        guard let underscore = stem.firstIndex(of: "_") else { throw bad }
        let digits = stem[..<underscore]
        let name = stem[stem.index(after: underscore)...]
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
              let version = Int(digits), version >= 1, !name.isEmpty else { throw bad }
        self.init(version: version, name: String(name), sql: sql)
    }

    /// FNV-1a 64 of the SQL text's UTF-8 bytes, 16 hex digits.
    var checksum: String {
        FNV1a64.hex(FNV1a64.hash(sql.utf8))
    }

    /// `0001_init`, for messages.
    var label: String {
        let digits = String(version)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits + "_" + name
    }
}

extension Migration {
    /// The migrations embedded at build time from the top-level
    /// `migrations/` folder (see the EmbedMigrations plugin).
    static func bundled() throws(StoreError) -> [Migration] {
        var migrations: [Migration] = []
        for file in embeddedMigrationFiles {
            migrations.append(try Migration(fileName: file.name, sql: file.sql))
        }
        return migrations
    }
}
