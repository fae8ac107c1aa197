extension Result {
    /// The error of a failed result: the batch checks whether a request's
    /// failure broke the whole transaction without switching over every
    /// result type.
    package var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
