package scenario_test

import "errors"

func errorsAs(err error, target any) bool { return err != nil && errors.As(err, target) }

func errorsIs(err, target error) bool { return errors.Is(err, target) }
