import Foundation
import HTTPCore
import HistoryAPI
import HistoryStore
import Testing

@Suite("ErrorCode")
struct ErrorCodeTests {
    @Test func codesAreDistinctSnakeCase() {
        let codes = ErrorCode.allCases.map(\.rawValue)
        #expect(Set(codes).count == codes.count)
        for code in codes {
            #expect(code.wholeMatch(of: /[a-z]+(_[a-z]+)*/) != nil, "\(code)")
        }
    }

    /// `scripts/check_openapi.py` reads the cases from the source, one
    /// `case name = "code"` per line: this fails when the file stops
    /// looking that way, before the script silently reads fewer codes.
    @Test func theSourceDeclaresOneCasePerLineAsTheOpenAPICheckReadsIt() throws {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appending(path: "Sources/HistoryAPI/HTTP/ErrorCode.swift")
        let text = try String(contentsOf: source, encoding: .utf8)
        let declared = text.matches(of: /(?m)^\s*case\s+\w+\s*=\s*"([a-z_]+)"\s*$/).map { String($0.output.1) }
        #expect(declared == ErrorCode.allCases.map(\.rawValue))
    }

    @Test func everyInvalidFieldIsA400OfItsFamily() {
        for field in InputField.allCases {
            let code = ErrorCode(invalid: field)
            #expect(code.status == .badRequest, "\(field)")
            #expect(code.rawValue.hasPrefix("invalid_"), "\(field)")
        }
        #expect(ErrorCode(invalid: .conversationID) == .invalidConversationID)
        #expect(ErrorCode(invalid: .around) == .invalidCursor)
        #expect(ErrorCode(invalid: .maxID) == .invalidIDRange)
        #expect(ErrorCode(invalid: .since) == .invalidVersion)
        #expect(ErrorCode(invalid: .cursor) == .invalidCursor)
        #expect(ErrorCode(invalid: .lastReadID) == .invalidMessageID)
    }

    /// HTTPCore meets malformed HTTP before any route and asks this layer
    /// for the answer: its code must carry the status HTTPCore chose.
    @Test(arguments: [RequestParseError.invalidRequestLine, .unsupportedVersion, .unsupportedTransferEncoding,
                      .unsupportedExpectation, .headTooLarge, .bodyTooLarge, .requestTimeout])
    func httpCoreFailuresKeepTheirStatus(_ error: RequestParseError) throws {
        let answer = APIError(HTTPFailure.malformedRequest(error))
        #expect(answer.status == error.status)
        #expect(answer.code != .internalError)
    }

    @Test func storeErrorsKeepTheirCodes() throws {
        let id = try #require(ConversationID("c"))
        #expect(APIError(StoreError.conversationNotFound(id)).code == .conversationNotFound)
        #expect(APIError(StoreError.invalid(field: .replyTo, reason: "must be positive")).code == .invalidReplyTo)
        #expect(APIError(StoreError.invalidSetting("readerCount", reason: "must be at least 1")).code == .internalError)
        #expect(APIError(StoreError.replyTargetNotFound(messageID: 3)).status == .unprocessableContent)
        #expect(APIError(StoreError.closed).code == .shuttingDown)
        let member = try #require(UserID("ana"))
        #expect(APIError(StoreError.memberNotFound(id, member)).code == .memberNotFound)
        #expect(APIError(StoreError.memberNotFound(id, member)).status == .notFound)
        #expect(APIError(StoreError.invalid(field: .cursor, reason: "is not a cursor")).code == .invalidCursor)
    }
}
