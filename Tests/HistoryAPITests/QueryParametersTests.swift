import Testing
@testable import HistoryAPI

@Suite("QueryParameters and DecimalParser")
struct QueryParametersTests {
    @Test func decodesPercentAndPlus() throws {
        let query = QueryParameters("a=1&b=x+y%20z&c&%6Cimit=5&empty=&&")
        #expect(try query.value("a", invalid: .invalidCursor) == "1")
        #expect(try query.value("b", invalid: .invalidCursor) == "x y z")
        #expect(try query.value("c", invalid: .invalidCursor) == "")
        #expect(try query.value("limit", invalid: .invalidLimit) == "5")
        #expect(try query.value("empty", invalid: .invalidLimit) == "")
        #expect(try query.value("missing", invalid: .invalidLimit) == nil)
        #expect(try QueryParameters(nil).value("a", invalid: .invalidLimit) == nil)
    }

    @Test func repeatedKnownParameterIsItsOwnError() throws {
        let query = QueryParameters("limit=5&before=3&limit=6")
        #expect(throws: APIError(.invalidLimit, "limit is given more than once")) {
            try query.value("limit", invalid: .invalidLimit)
        }
        // Repeated unknown parameters are ignored.
        #expect(try QueryParameters("x=1&x=2&before=3").value("before", invalid: .invalidCursor) == "3")
    }

    @Test(arguments: ["before=%", "before=%4", "before=%zz", "before=%FF", "before=1%"])
    func malformedPercentIsTheParametersError(_ text: String) {
        #expect(throws: APIError(.invalidCursor, "before has a malformed percent-encoding")) {
            try QueryParameters(Substring(text)).value("before", invalid: .invalidCursor)
        }
    }

    @Test func positiveInt64IsStrict() {
        #expect(DecimalParser.positiveInt64("1") == 1)
        #expect(DecimalParser.positiveInt64("9223372036854775807") == .max)
        #expect(DecimalParser.positiveInt64("007") == 7)
        for bad in ["", "0", "-1", "+1", " 1", "1 ", "1.0", "1e3", "9223372036854775808", "99999999999999999999999", "0x1", "١"] {
            #expect(DecimalParser.positiveInt64(bad) == nil, "\(bad)")
        }
        #expect(DecimalParser.nonNegativeInt64("0") == 0)
        #expect(DecimalParser.nonNegativeInt64("") == nil)
    }

    @Test func secondsTakeIntegersAndDecimals() {
        #expect(DecimalParser.seconds("0") == .zero)
        #expect(DecimalParser.seconds("60") == .seconds(60))
        #expect(DecimalParser.seconds("1.5") == .milliseconds(1500))
        #expect(DecimalParser.seconds("0.001") == .milliseconds(1))
        for bad in ["", ".5", "5.", "-1", "1e1", "1.5.5", "abc", "99999999999999999999", "1.5x"] {
            #expect(DecimalParser.seconds(bad) == nil, "\(bad)")
        }
    }

    @Test func piecesSplitOnTheSeparatorByteLikeSplit() {
        let samples = ["", "&", "a", "a&b", "&a&&b&", "x=1&é=ü&😀=2", "/v1/conversations/c/messages", "//x//"]
        for sample in samples {
            let text = Substring(sample)
            #expect(text.pieces(separatedBy: UInt8(ascii: "&"), omittingEmpty: true)
                    == text.split(separator: "&", omittingEmptySubsequences: true), "\(sample)")
            #expect(text.pieces(separatedBy: UInt8(ascii: "/"), omittingEmpty: false)
                    == text.split(separator: "/", omittingEmptySubsequences: false), "\(sample)")
        }
        // A separator followed by a combining mark is still a separator byte.
        #expect(Substring("a&\u{301}b").pieces(separatedBy: UInt8(ascii: "&"), omittingEmpty: true) == ["a", "\u{301}b"])
    }
}
