/// One numbered schema file, as data: `0001_init.sql` is version 1, "init".
/// Each backend has its own numbered series (their SQL dialects differ),
/// embedded at build time by the EmbedMigrations plugin.
///
/// A migration is never modified once it has shipped; its checksum (FNV-1a
/// 64 of the exact SQL text) is recorded when it is applied, and a database
/// whose recorded checksum differs is refused (`MigrationPlan`).
public struct Migration: Hashable, Sendable {
    public let version: Int
    public let name: String
    public let sql: String

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }

    /// Parses `NNNN_name.sql`; the digits are the version (at least 1).
    public init(fileName: String, sql: String) throws(MigrationRefusal) {
        let bad = MigrationRefusal(reason: "migration file name \"\(fileName)\" is not NNNN_name.sql")
        guard fileName.hasSuffix(".sql") else { throw bad }
        let stem = fileName.dropLast(4)
        guard let underscore = stem.firstIndex(of: "_") else { throw bad }
        let digits = stem[..<underscore]
        let name = stem[stem.index(after: underscore)...]
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
              let version = Int(digits), version >= 1, !name.isEmpty else { throw bad }
        self.init(version: version, name: String(name), sql: sql)
    }

    /// The embedded files of one series, in order of their names.
    public static func parse(_ files: [(name: String, sql: String)]) throws(MigrationRefusal) -> [Migration] {
        var migrations: [Migration] = []
        for file in files {
            migrations.append(try Migration(fileName: file.name, sql: file.sql))
        }
        return migrations
    }

    /// FNV-1a 64 of the SQL text's UTF-8 bytes, 16 hex digits.
    public var checksum: String {
        FNV1a64.hex(FNV1a64.hash(sql.utf8))
    }

    /// `0001_init`, for messages.
    public var label: String {
        let digits = String(version)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits + "_" + name
    }
}
