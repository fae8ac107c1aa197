import HTTPCore
import HistoryStore

/// The one way to answer a request after its handler returned: an append
/// after its group commit, a long-poll after a change, a stream's head.
///
/// One-shot: whoever holds it answers exactly once (by convention; it is a
/// value so that it costs no allocation). Its answer leaves through the
/// request's `AnswerOutlet`, the same exit as a handler's `.now`, so the
/// gates decorate both alike. `complete(_:_:)` is the one place a store
/// failure of a write becomes its HTTP answer.
///
/// ```swift
/// return request.later { promise in
///     store.delete(messageID: id, in: conversation, access: access) { result in
///         promise.complete(result) { message in promise.succeed(.ok, json: JSONWriter.message(message)) }
///     }
/// }
/// ```
public struct AnswerPromise: Sendable {
    /// The request being answered (its route label, `Accept-Encoding`, context).
    public let request: APIRequest

    /// Answers a JSON body, gzip when accepted (`APIRequest.jsonResponse`).
    public func succeed(_ status: HTTPStatus, json body: [UInt8], headers: HTTPHeaders = [:]) {
        request.outlet.deliver(request.jsonResponse(status, body, headers: headers))
    }

    /// Answers any response; the route label is filled in.
    public func resolve(_ response: HTTPResponse) {
        var response = response
        response.route = request.route
        request.outlet.deliver(response)
    }

    /// Answers the contract's error body.
    public func fail(_ error: APIError) {
        request.outlet.deliver(error.response(route: request.route))
    }

    /// Answers a store failure (`APIRequest.apiError`: logged, counted, mapped).
    public func fail(_ error: StoreError) {
        fail(request.apiError(error))
    }

    /// A store operation's outcome: `success` answers its value; a failure
    /// is answered here.
    public func complete<T>(_ result: Result<T, StoreError>, _ success: (T) -> Void) {
        switch result {
        case .success(let value): success(value)
        case .failure(let error): fail(error)
        }
    }
}
