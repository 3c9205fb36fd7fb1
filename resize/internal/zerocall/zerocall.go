// Package zerocall calls functions and methods with zero-valued arguments
// (a nil context, nil pointers, slices, maps, funcs and interfaces, "" and
// 0) and reports the calls that panicked or did not return, so that a test
// can hold a package's exported API to answering nil and zero values with
// an error or a zero value rather than a panic.
//
// It is an ordinary package, not a _test.go file, because the test that
// uses it lists values from every package of the module and test helpers
// cannot be imported across packages; being internal to resize, only the
// module's own code can import it.
package zerocall

import (
	"fmt"
	"reflect"
	"runtime/debug"
	"sort"
	"time"
)

// DefaultTimeout is how long a call may take before Call reports it as
// blocked when the caller gives no timeout. A call with zero arguments
// has nothing to wait for, so anything near this is a call that waits for
// ever.
const DefaultTimeout = 10 * time.Second

// Result is the outcome of one call.
type Result struct {
	// Name is what was called, as "Type.Method" or "pkg.Func".
	Name string
	// Out are the call's results; nil when it panicked or blocked.
	Out []reflect.Value
	// Panic is the recovered panic value, and Stack where it happened;
	// nil when the call returned or blocked.
	Panic any
	Stack string
	// Blocked says that the call had not returned within the timeout. Its
	// goroutine is left running.
	Blocked bool
	// Skipped is the reason the call was not made, when it was not.
	Skipped string
}

// Failed reports whether the call panicked or blocked.
func (r Result) Failed() bool { return r.Panic != nil || r.Blocked }

// Err returns the call's last result when it is a non-nil error, and nil
// otherwise.
func (r Result) Err() error {
	if len(r.Out) == 0 {
		return nil
	}
	last := r.Out[len(r.Out)-1]
	if last.Kind() != reflect.Interface || last.IsNil() {
		return nil
	}
	err, _ := last.Interface().(error)
	return err
}

// ReturnsError reports whether the called function's last result is an
// error, whatever its value.
func (r Result) ReturnsError() bool {
	if len(r.Out) == 0 {
		return false
	}
	return r.Out[len(r.Out)-1].Type() == errorType
}

// String describes a failed call: what was called and the panic with its
// stack, or that it blocked.
func (r Result) String() string {
	switch {
	case r.Skipped != "":
		return fmt.Sprintf("%s: skipped: %s", r.Name, r.Skipped)
	case r.Blocked:
		return fmt.Sprintf("%s: did not return with zero arguments", r.Name)
	case r.Panic != nil:
		return fmt.Sprintf("%s: panicked with zero arguments: %v\n%s", r.Name, r.Panic, r.Stack)
	}
	return fmt.Sprintf("%s: returned", r.Name)
}

var errorType = reflect.TypeFor[error]()

// Call calls fn, a func value, with the zero value of each of its
// parameters (none for a variadic parameter), under recover, and waits at
// most timeout (DefaultTimeout when 0) for it to return.
func Call(name string, fn any, timeout time.Duration) Result {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func || v.IsNil() {
		return Result{Name: name, Panic: fmt.Sprintf("zerocall: %T is not a func", fn)}
	}
	return call(name, v, timeout)
}

// call is Call for a func reflect.Value (a function or a bound method).
func call(name string, fn reflect.Value, timeout time.Duration) Result {
	t := fn.Type()
	n := t.NumIn()
	if t.IsVariadic() {
		n--
	}
	args := make([]reflect.Value, n)
	for i := range args {
		args[i] = reflect.Zero(t.In(i))
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	done := make(chan Result, 1)
	go func() {
		r := Result{Name: name}
		defer func() {
			if p := recover(); p != nil {
				r.Panic, r.Stack, r.Out = p, string(debug.Stack()), nil
			}
			done <- r
		}()
		r.Out = fn.Call(args)
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case r := <-done:
		return r
	case <-timer.C:
		return Result{Name: name, Blocked: true}
	}
}

// Options say which methods Methods calls and how long it waits.
type Options struct {
	// Skip names methods not to call, with the reason (reported as
	// Skipped results).
	Skip map[string]string
	// Only, when not empty, limits the calls to the methods it names:
	// for a value whose method set includes methods promoted from a type
	// of another module, the ones its own package declares.
	Only []string
	// Timeout is how long each call may take (DefaultTimeout when 0).
	Timeout time.Duration
}

// Methods calls every exported method of v with zero arguments (Call),
// but for those opts leaves out, and returns the results in the order of
// the method names. typeName names v's type in the results
// ("Type.Method").
//
// The methods are those of v's dynamic type: for a pointer, the
// pointer's, which include the value's. A nil pointer's value-receiver
// methods are left out, since calling one dereferences the pointer before
// the method runs (Go panics in the call itself, which no method can
// prevent), so only the methods a nil receiver can reach are called.
func Methods(typeName string, v any, opts Options) []Result {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return []Result{{Name: typeName, Panic: "zerocall: a nil interface has no methods"}}
	}
	t := rv.Type()
	var valueMethods map[string]bool
	if t.Kind() == reflect.Pointer && rv.IsNil() {
		valueMethods = map[string]bool{}
		et := t.Elem()
		for i := 0; i < et.NumMethod(); i++ {
			valueMethods[et.Method(i).Name] = true
		}
	}
	var only map[string]bool
	if len(opts.Only) > 0 {
		only = map[string]bool{}
		for _, name := range opts.Only {
			only[name] = true
		}
	}
	var out []Result
	for i := 0; i < t.NumMethod(); i++ {
		m := t.Method(i)
		if !m.IsExported() || valueMethods[m.Name] || (only != nil && !only[m.Name]) {
			continue
		}
		name := typeName + "." + m.Name
		if why, ok := opts.Skip[m.Name]; ok {
			out = append(out, Result{Name: name, Skipped: why})
			continue
		}
		out = append(out, call(name, rv.Method(i), opts.Timeout))
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// MethodNames returns the names of the exported methods of v's dynamic
// type, so that a test can check that a skip list names only methods
// that exist.
func MethodNames(v any) []string {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return nil
	}
	t := rv.Type()
	var names []string
	for i := 0; i < t.NumMethod(); i++ {
		if m := t.Method(i); m.IsExported() {
			names = append(names, m.Name)
		}
	}
	return names
}
