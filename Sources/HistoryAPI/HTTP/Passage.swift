import HTTPCore
import HistoryAccess

/// A request on its way through the gates to its route: what each gate
/// reads and what it learns for the next (the forwarded client's context,
/// the caller) and for the answer (`marks`).
struct Passage {
    let request: HTTPRequest
    /// The connection's context, or the forwarded client's (`ForwardedContext`).
    var context: any RequestContext
    /// The route, matched once: every refusal carries its label.
    let route: RouteMatch
    /// Who authentication found; nil before it, and on paths that need nobody.
    var caller: Caller?
    var marks = AnswerMarks()
    /// The path's first segment percent-decoded as the router decodes it
    /// (`Substring.decodedFirstPathSegment`), nil when it does not decode:
    /// what the gates decide a path's place in the API by (a caller
    /// needed, a rate charged), decoded once for all of them.
    let firstSegment: String?

    init(request: HTTPRequest, context: any RequestContext, route: RouteMatch) {
        self.request = request
        self.context = context
        self.route = route
        firstSegment = request.path.decodedFirstPathSegment()
    }

    /// The request's path: the parser already reduced an absolute-form
    /// target to it (RFC 9112 §3.2.2).
    var path: Substring { request.path }

    /// `error`'s answer under this request's route label.
    func refusal(_ error: APIError) -> HTTPResponse {
        error.response(route: route.label)
    }
}
