import HTTPCore

/// The gates in order, shared by every request (and by every later
/// answer's `AnswerOutlet`): the one entry and the one exit of the API.
final class GateList: Sendable {
    private let gates: [any RequestGate]

    init(_ gates: [any RequestGate]) {
        self.gates = gates
    }

    /// Each gate in turn; the first refusal (or answer) stops the request.
    func admit(_ passage: inout Passage) -> HTTPResponse? {
        for gate in gates {
            if let answer = gate.admit(&passage) { return answer }
        }
        return nil
    }

    /// Every gate's decoration, the innermost (last) first, as nested
    /// middleware would add them.
    func decorate(_ response: inout HTTPResponse, marks: AnswerMarks) {
        for index in gates.indices.reversed() {
            gates[index].decorate(&response, marks: marks)
        }
    }
}
