import HTTPCore

/// What a handler returns: its answer, or word that the answer comes later.
///
/// `.now` is the usual case (a page read on the read pool, a 304, a
/// refusal): the router sends it through the gates' exit to the
/// connection. `.later` is returned by `APIRequest.later`, whose
/// `AnswerPromise` was handed on to whatever answers (an append's group
/// commit, a long-poll's wake, a stream); nobody waits for it, and no lock
/// decides which came first: the promise alone answers.
///
/// ```swift
/// return request.json(.ok, JSONWriter.message(message))
/// ```
public enum Answer: Sendable {
    case now(HTTPResponse)
    /// The request's `AnswerPromise` answers, exactly once.
    case later
}
