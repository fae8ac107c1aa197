@testable import HistoryPostgres
import HistoryTestSupport
import Testing

extension PostgresTests {
    /// Array parameters as text literals: what PostgreSQL reads back from
    /// them is exactly what was sent, quotes, backslashes and NULLs included.
    @Suite("PostgresArrayLiteral")
    struct PostgresArrayLiteralTests {
        @Test func textsComeBackAsSentThroughATextArrayParameter() async throws {
            try await withTestDatabase { uri in
                let connection = try PGConnection(uri: uri)
                let values: [String?] = ["plain", "", nil, "NULL", "with \"quotes\"", "back\\slash\\", "a,b", "{braces}",
                                         " spaced ", "it's", "é ü 漢"]
                let result = try connection.query("""
                    SELECT v IS NULL, coalesce(v, '') FROM unnest($1::text[]) WITH ORDINALITY AS u(v, n) ORDER BY n
                    """, [.text(PostgresArrayLiteral.texts(values))], resultFormat: .text)
                let read = (0..<result.rowCount).map { row in result.string(row, 0) == "t" ? nil : result.string(row, 1) }
                #expect(read == values)
                #expect(try connection.query("SELECT cardinality($1::text[])", [.text(PostgresArrayLiteral.texts([]))])
                    .int64(0, 0) == 0)
            }
        }

        @Test func aCommitOfAFailedTransactionIsTaggedRollback() async throws {
            try await withTestDatabase { uri in
                let connection = try PGConnection(uri: uri)
                try connection.execute(sql: "BEGIN")
                #expect(throws: PostgresError.self) { try connection.execute(sql: "SELECT 1 / 0") }
                let results = try connection.pipeline([PGPipelineStatement("COMMIT", cached: false)])
                #expect(results.map(\.commandTag) == ["ROLLBACK"])
                #expect(try connection.pipeline([PGPipelineStatement("BEGIN", cached: false),
                                                  PGPipelineStatement("COMMIT", cached: false)]).map(\.commandTag)
                        == ["BEGIN", "COMMIT"])
            }
        }
    }
}
