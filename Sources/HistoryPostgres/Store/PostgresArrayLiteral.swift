/// Integer arrays sent as one text parameter (`$1::bigint[]`): one
/// statement then covers every row of a batch (`unnest`, `= ANY`) instead
/// of one round trip per row. The literal syntax: `{1,NULL,3}`. Arrays of
/// free text go as binary `bytea[]` instead (`PostgresValue.storedTexts`):
/// a text literal cannot carry U+0000.
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
}
