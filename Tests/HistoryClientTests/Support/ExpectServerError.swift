import HistoryClient
import Testing

/// Expects `body` to throw the contract's error `code` with `status`.
func expectServerError<T>(
    _ code: HistoryErrorCode, status: Int, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> T
) async {
    do {
        _ = try await body()
        Issue.record("expected \(code), got success", sourceLocation: sourceLocation)
    } catch let error as HistoryClientError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        #expect(error.status == status, "\(error)", sourceLocation: sourceLocation)
        if case .server(let serverError) = error {
            #expect(!serverError.message.isEmpty, sourceLocation: sourceLocation)
        }
    } catch {
        Issue.record("expected HistoryClientError, got \(error)", sourceLocation: sourceLocation)
    }
}
