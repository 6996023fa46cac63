"""What the parts of `parley web` share: the services built once for the HTTP API and every
platform's ingress, how a request's body is read and an error answered, and the refusal of
a platform's credential that stops the process."""
