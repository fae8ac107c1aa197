@testable import HistoryLoad
import Testing

/// A bench row with errors names them: README's sitting once had a row with
/// one error that nothing could name.
@Suite("bench: a row's errors named")
struct BenchErrorNoteTests {
    @Test func noErrorsNoNote() {
        #expect(BenchSuite.errorNote(count: 0, errors: [:]) == "")
    }

    @Test func theThreeMostFrequentAreNamedWithoutBreakingTheTable() {
        let note = BenchSuite.errorNote(count: 9, errors: [
            "events (long-poll): transport timed out": 1, "post: status 503": 4, "page before: status 500": 3,
            "a|b: status 429": 1,
        ])
        #expect(note == " (9 errors: post: status 503: 4; page before: status 500: 3; a/b: status 429: 1)")
        #expect(!note.contains("|"))
    }
}
