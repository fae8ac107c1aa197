import HTTPCore

/// Proxy headers (`ClientAddressing`): refused in open mode (403), believed
/// from a trusted proxy, whose forwarded client then stands for the peer
/// in every later gate and route, and in the access log.
final class ProxyGate: RequestGate {
    let clients: ClientAddressing
    let metrics: Metrics

    init(clients: ClientAddressing, metrics: Metrics) {
        self.clients = clients
        self.metrics = metrics
    }

    func admit(_ passage: inout Passage) -> HTTPResponse? {
        if clients.refusesForwardedRequests && ClientAddressing.isForwarded(passage.request) {
            let error = ClientAddressing.forwardedInOpenMode
            metrics.recordDenied(status: error.status.code, code: error.code.rawValue)
            return passage.refusal(error)
        }
        if let client = clients.forwardedClient(of: passage.request, remoteAddress: passage.context.remoteAddress) {
            passage.context = ForwardedContext(connection: passage.context, client: client)
            passage.marks.client = client.description
        }
        return nil
    }

    func decorate(_ response: inout HTTPResponse, marks: AnswerMarks) {
        if let client = marks.client { response.client = client }
    }
}
