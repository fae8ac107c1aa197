import HTTPCore

/// Where a request's later answer leaves: through the gates' decorations
/// to the connection, from whatever thread answers. The connection's
/// `respond` hops to its queue: one hand-off back, whoever answers.
///
/// An answer given at once on the server's thread (a read it was allowed
/// to block for included) does not pass here: the responder decorates it
/// (`GateList.decorate`) and returns it to the connection, which writes it
/// at once.
struct AnswerOutlet: Sendable {
    let gates: GateList
    let marks: AnswerMarks
    let respond: @Sendable (HTTPResponse) -> Void

    func deliver(_ response: HTTPResponse) {
        var response = response
        gates.decorate(&response, marks: marks)
        respond(response)
    }

    /// An outlet without gates: the router alone, in tests.
    static func bare(_ respond: @escaping @Sendable (HTTPResponse) -> Void) -> AnswerOutlet {
        AnswerOutlet(gates: GateList([]), marks: AnswerMarks(), respond: respond)
    }
}
