package source

import (
	"context"
	"errors"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/smithy-go/logging"
)

// awsLookedIn says where the AWS SDK's default chain looks for
// credentials, for the error that none were found.
const awsLookedIn = "looked in AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE and ~/.aws/{config,credentials}, SSO, web identity, container and instance roles"

// googleLookedIn says the same of Google's application default
// credentials.
const googleLookedIn = "looked in GOOGLE_APPLICATION_CREDENTIALS, gcloud's application default credentials (gcloud auth application-default login) and the metadata server"

// quietAWS are the AWS SDK's load options that keep it from writing to
// stderr: its logger (the instance metadata client's "WARN falling back
// to IMDSv1", for one) writes nothing; errors say what went wrong.
func quietAWS() []func(*config.LoadOptions) error {
	return []func(*config.LoadOptions) error{config.WithLogger(logging.Nop{}), config.WithClientLogMode(0)}
}

// checkAWSCredentials retrieves the credentials of cfg once, before any
// request to the store, so that a missing credential is said as such
// (ErrNoCredentials, naming where they are looked for) rather than as the
// status of the last place the chain tried (an instance metadata
// service's "HTTP 403 Forbidden ... no EC2 IMDS role found"). The SDK
// caches what it retrieved, so the first request does not ask again.
func checkAWSCredentials(ctx context.Context, cfg aws.Config) error {
	if cfg.Credentials == nil {
		return &credentialsError{msg: "no AWS credentials found (" + awsLookedIn + ")"}
	}
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return awsCredentialsError(err)
	}
	return nil
}

// awsCredentialsError says why the chain's retrieval failed: nothing was
// found when the chain fell through to the instance role (its last
// resort), else the cause, which names the source configured (a profile,
// SSO, a role to assume).
func awsCredentialsError(err error) error {
	msg := err.Error()
	if strings.Contains(msg, "EC2 IMDS") || strings.Contains(msg, "ec2imds") {
		return &credentialsError{msg: "no AWS credentials found (" + awsLookedIn + ")", err: err}
	}
	return &credentialsError{msg: "the AWS credentials could not be loaded: " + msg, err: err}
}

// googleCredentialsError is the error of the application default
// credentials' lookup, err: none found is said as such.
func googleCredentialsError(err error) error {
	if strings.Contains(err.Error(), "could not find default credentials") {
		return &credentialsError{msg: "no Google credentials found (" + googleLookedIn + ")", err: err}
	}
	return &credentialsError{msg: "the Google credentials could not be loaded: " + err.Error(), err: err}
}

// credentialsError is a failure to find or load credentials: it matches
// ErrNoCredentials and unwraps to the cause, which its message replaces.
type credentialsError struct {
	msg string
	err error
}

func (e *credentialsError) Error() string { return e.msg }
func (e *credentialsError) Unwrap() error { return e.err }

// Is makes every credentialsError match ErrNoCredentials.
func (e *credentialsError) Is(target error) bool { return target == ErrNoCredentials }

// asCredentialsError turns the error of opening a bucket of scheme into a
// credentials error when it is one (Cloud Storage's lookup fails inside
// newGCSClient, before any request).
func asCredentialsError(scheme string, err error) error {
	if scheme == SchemeGS && !errors.Is(err, ErrNoCredentials) && strings.Contains(err.Error(), "google application default credentials") {
		return googleCredentialsError(err)
	}
	return err
}
