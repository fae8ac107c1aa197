@testable import HistoryPostgres
import HistoryTestSupport
import Testing

extension PostgresTests {
    /// `PostgresRows.rowsOrdered`: rows in the order of their key whatever
    /// order the server handed them out in, rows without a key left out.
    @Suite("PostgresRows order")
    struct PostgresRowsOrderTests {
        @Test func rowsComeOutByKeyFromAscendingDescendingAndMixedResults() async throws {
            try await withTestDatabase { uri in
                let connection = try PGConnection(uri: uri)
                func ordered(_ values: String) throws -> [Int] {
                    let result = try connection.query("SELECT k FROM (VALUES \(values)) AS v(k)")
                    return PostgresRows.rowsOrdered(result, by: 0)
                }
                #expect(try ordered("(1::bigint), (2), (5)") == [0, 1, 2])
                #expect(try ordered("(5::bigint), (2), (1)") == [2, 1, 0])
                #expect(try ordered("(3::bigint), (1), (NULL), (2)") == [1, 3, 0])
                #expect(try ordered("(NULL::bigint)") == [])
            }
        }
    }
}
