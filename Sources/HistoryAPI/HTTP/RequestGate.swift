import HTTPCore

/// One check every request passes before it is routed (the `Host`
/// allow-list, proxy headers, CORS, the token, the rate limits), in the
/// spirit of a middleware that returns the response: on the way in it may
/// refuse (or answer, as a preflight does) and note what the answer must
/// carry; on the way out it decorates every answer it let through, the
/// refusals of the gates after it included.
///
/// The gates run in their list's order (`GateList`), at one entry and one
/// exit of `APIResponder`; what a gate notes for the way out goes in
/// `AnswerMarks`, so an answer given later needs nothing else.
///
/// Gates are classes: the list is walked twice for every request, and
/// copying a struct out of an existential retains each of its references
/// (about 1% of a deep page's samples in `perf`); a class is one pointer.
protocol RequestGate: AnyObject, Sendable {
    /// Nil lets the request on (after noting in `passage` what its answer
    /// carries); an answer stops it there.
    func admit(_ passage: inout Passage) -> HTTPResponse?

    /// Adds what `marks` says this gate owes an answer; nothing when its
    /// marks are unset (the request never reached it).
    func decorate(_ response: inout HTTPResponse, marks: AnswerMarks)
}

extension RequestGate {
    func decorate(_ response: inout HTTPResponse, marks: AnswerMarks) {}
}
