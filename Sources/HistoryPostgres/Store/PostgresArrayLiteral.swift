/// Arrays sent as one text parameter (`$1::bigint[]`, `$1::text[]`): one
/// statement then covers every row of a batch (`unnest`, `= ANY`) instead
/// of one round trip per row.
///
/// The literal syntax: `{1,NULL,3}`; text elements are always
/// double-quoted, with `"` and `\` escaped by a backslash, so any text
/// (commas, braces, spaces, the word NULL) reads back as itself.
///
/// Related PostgreSQL documentation:
/// <https://www.postgresql.org/docs/current/arrays.html#ARRAYS-IO>
enum PostgresArrayLiteral {
    static func int64s(_ values: [Int64]) -> String {
        "{" + values.map(String.init).joined(separator: ",") + "}"
    }

    static func int64s(_ values: [Int64?]) -> String {
        "{" + values.map { $0.map(String.init) ?? "NULL" }.joined(separator: ",") + "}"
    }

    static func texts(_ values: [String]) -> String {
        "{" + values.map(quoted).joined(separator: ",") + "}"
    }

    static func texts(_ values: [String?]) -> String {
        "{" + values.map { $0.map(quoted) ?? "NULL" }.joined(separator: ",") + "}"
    }

    private static func quoted(_ text: String) -> String {
        var quoted = "\""
        quoted.reserveCapacity(text.utf8.count + 2)
        for character in text.unicodeScalars {
            if character == "\"" || character == "\\" { quoted.unicodeScalars.append("\\") }
            quoted.unicodeScalars.append(character)
        }
        return quoted + "\""
    }
}
